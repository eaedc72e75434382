/**
 * The content types the informers can ask for (`--kube-api-content-type`), apart from the codec
 * (src/kube/wire.ts) so that the flag parser reads them without loading the HTTP client.
 */

/** `application/vnd.kubernetes.protobuf` (runtime.ContentTypeProtobuf). */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

/** The two content types `--kube-api-content-type` accepts. */
export type KubeContentType = 'application/json' | typeof PROTOBUF_CONTENT_TYPE;

/** kube-controller-manager's default (`ClientConnection.ContentType`). */
export const DEFAULT_KUBE_API_CONTENT_TYPE: KubeContentType = PROTOBUF_CONTENT_TYPE;

/** The environment variable the `--kube-api-content-type` flag reads (src/cli/flags.ts `NLC_<FLAG>`); the informer factories read it as their default too. */
export const KUBE_API_CONTENT_TYPE_ENV = 'NLC_KUBE_API_CONTENT_TYPE';

/**
 * Reads a content type as `--kube-api-content-type` gives it.
 * @returns the content type, or `undefined` for anything but `application/json` and
 *   `application/vnd.kubernetes.protobuf` (case-insensitive, surrounding blanks ignored).
 */
export function parseKubeContentType(s: string): KubeContentType | undefined {
  const t = s.trim().toLowerCase();
  return t === 'application/json' || t === PROTOBUF_CONTENT_TYPE ? t : undefined;
}

/**
 * The content type informers use when their caller gave none: {@link KUBE_API_CONTENT_TYPE_ENV}
 * when it holds a valid one (so `NLC_KUBE_API_CONTENT_TYPE=application/json` forces JSON for the
 * tests and the bench as for the controller), else protobuf.
 */
export function defaultKubeContentType(env: NodeJS.ProcessEnv = process.env): KubeContentType {
  return parseKubeContentType(env[KUBE_API_CONTENT_TYPE_ENV] ?? '') ?? DEFAULT_KUBE_API_CONTENT_TYPE;
}

