/**
 * Writes objects in protobuf to a real API server with bytes that no JSON client can send: strings
 * that are not UTF-8, as a Go protobuf client (a kubelet, node-problem-detector) can write them,
 * since Go strings are bytes and the API server stores them as they are (issue 53).
 *
 * The trick: the object is read in protobuf, changed with @bufbuild/protobuf (every string that is
 * to carry raw bytes set to a placeholder of the same byte length), encoded, the placeholders'
 * bytes replaced by the raw bytes (so every length prefix stays right), wrapped in the `k8s\0`
 * envelope and PUT with `Content-Type: application/vnd.kubernetes.protobuf`.
 */
import { fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { HttpMethod, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';
import { getRaw, prepareRequest } from '../../src/kube/client.js';
import { unwrapEnvelope } from '../../src/kube/protobuf/envelope.js';
import { envelopeRaw, withRawBytes, type RawString } from './protobuf-wire.js';

export { rawString, type RawString } from './protobuf-wire.js';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** Reads `path` in protobuf as a full reflective message of `schema`. @throws {Error} for a non-200 answer. */
export async function readProtobuf<D extends DescMessage>(kc: KubeConfig, path: string, schema: D): Promise<MessageShape<D>> {
  const res = await getRaw(kc, path, {}, { accept: PROTOBUF });
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status} ${await res.text()}`);
  return fromBinary(schema, unwrapEnvelope(new Uint8Array(await res.arrayBuffer())).raw);
}

/**
 * PUTs `message` (of `schema`, kind `kind` in group-version `apiVersion`) to `path` in protobuf,
 * with each of `raws`' placeholders replaced by its raw bytes.
 * @returns the HTTP status and body text of the answer.
 * @throws {Error} when a placeholder is not found exactly once in the encoded message.
 */
export async function putProtobuf<D extends DescMessage>(
  kc: KubeConfig,
  path: string,
  schema: D,
  message: MessageShape<D>,
  kind: string,
  apiVersion: string,
  raws: readonly RawString[],
): Promise<{ status: number; body: string }> {
  const body = envelopeRaw(kind, apiVersion, withRawBytes(toBinary(schema, message), raws));
  const { url, headers, dispatcher } = await prepareRequest(kc, HttpMethod.PUT, path, {}, { Accept: 'application/json', 'Content-Type': PROTOBUF });
  const res = await fetch(url, { method: 'PUT', headers, body, ...(dispatcher ? { dispatcher } : {}) });
  return { status: res.status, body: await res.text() };
}
