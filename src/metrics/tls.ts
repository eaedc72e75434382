/**
 * The secure port's serving certificate: the files of `--tls-cert-file` / `--tls-private-key-file`,
 * or a self-signed certificate made in memory at start-up (Node's crypto makes keys but cannot issue
 * X.509 certificates; the `selfsigned` package does, and this is the one module that uses it).
 *
 * Upstream: `SecureServingOptions.MaybeDefaultWithSelfSignedCerts` (kube-controller-manager passes
 * `"localhost"` and 127.0.0.1) and `certutil.GenerateSelfSignedCertKeyWithFixtures`, which write the
 * pair to `--cert-dir`; we keep it in memory only (a new one each start, as upstream with no
 * `--cert-dir`... which it requires; clients of a self-signed port cannot pin it anyway).
 */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { X509Certificate, createPrivateKey } from 'node:crypto';

/** A PEM certificate (chain) and its PEM private key, and where they came from. */
export interface ServingCertificate {
  cert: string;
  key: string;
  /** True when made in memory by {@link servingCertificate}. */
  selfSigned: boolean;
}

/** Validity of the self-signed certificate, **milliseconds**: one year, as upstream's. */
export const SELF_SIGNED_VALIDITY_MS = 365 * 24 * 3600 * 1000;

/**
 * Makes a self-signed serving certificate (EC P-256, SHA-256) for `localhost`, this host's name,
 * 127.0.0.1 and ::1, valid from `nowMs` for {@link SELF_SIGNED_VALIDITY_MS}.
 * @param nowMs epoch milliseconds (the common name carries it in seconds: `localhost@<s>`, as upstream).
 * @returns the PEM pair, `selfSigned: true`.
 * @throws {Error} only if key generation fails.
 */
export async function selfSignedCertificate(nowMs: number): Promise<ServingCertificate> {
  const host = hostname();
  const altNames = [
    { type: 2 as const, value: 'localhost' },
    ...(host && host !== 'localhost' ? [{ type: 2 as const, value: host }] : []),
    { type: 7 as const, ip: '127.0.0.1' },
    { type: 7 as const, ip: '::1' },
  ];
  // Imported here, not at the top: selfsigned pulls in ~200 modules (@peculiar/x509, asn1js,
  // tsyringe), ~0.1 s of start-up CPU that a run with certificate files or --secure-port=0 never
  // needs (the bench's time to caches synced).
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: `localhost@${Math.floor(nowMs / 1000)}` }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(nowMs),
    notAfterDate: new Date(nowMs + SELF_SIGNED_VALIDITY_MS),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  return { cert: pems.cert, key: pems.private, selfSigned: true };
}

/**
 * The secure port's certificate: read from the two files when both are given, else self-signed.
 * @param files `--tls-cert-file` and `--tls-private-key-file` (both or neither; flags.ts checks).
 * @param nowMs epoch milliseconds, for the self-signed certificate.
 * @returns the PEM pair.
 * @throws {Error} with a one-line reason when a file cannot be read, does not hold a PEM certificate
 *   or key, or the key does not belong to the certificate: a start-up failure (exit 1, before the
 *   process campaigns for the Lease).
 */
export async function servingCertificate(files: { certFile: string; keyFile: string }, nowMs: number): Promise<ServingCertificate> {
  if (!files.certFile && !files.keyFile) return selfSignedCertificate(nowMs);
  const read = async (path: string, flag: string): Promise<string> => {
    try {
      return await readFile(path, 'utf8');
    } catch (err) {
      throw new Error(`--${flag}: cannot read "${path}": ${(err as Error).message}`, { cause: err });
    }
  };
  const cert = await read(files.certFile, 'tls-cert-file');
  const key = await read(files.keyFile, 'tls-private-key-file');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`--tls-cert-file: "${files.certFile}" holds no PEM certificate: ${(err as Error).message}`, { cause: err });
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key))) throw new Error('the key does not match the certificate');
  } catch (err) {
    throw new Error(`--tls-private-key-file: "${files.keyFile}": ${(err as Error).message}`, { cause: err });
  }
  return { cert, key, selfSigned: false };
}
