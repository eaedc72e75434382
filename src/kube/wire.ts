/**
 * The wire codec of one informer: which content type its list and watch requests ask for, and how
 * the answer is decoded into the JSON shape the slim converters read (src/kube/objects.ts).
 *
 * kube-controller-manager's clients ask for protobuf (`--kube-api-content-type`, default
 * `application/vnd.kubernetes.protobuf`, with `Accept: application/vnd.kubernetes.protobuf,application/json`),
 * and since 1.35 client-go's reflector does so in its streaming watch-list too. {@link WireCodec}
 * does the same for the Pod, Node and Lease informers: the list is one enveloped `<Kind>List`, a
 * watch is length-delimited `WatchEvent` frames (src/kube/protobuf/), each decoded into a
 * JSON-shaped view. Everything after that (the converters, the store, watch-list bookmarks, 410s)
 * is unchanged: an {@link Informer} only sees a list function and a watch function.
 *
 * Falling back to JSON (counted in `node_lifecycle_controller_informer_wire_fallback_total{resource,reason}`
 * through the request metrics sink, src/kube/client.ts `RestClientMetricsSink.wireFallback`):
 * - `refused`: the server answers 406 or 415 to the protobuf request; the same request is sent
 *   again as JSON at once, so the informer never sees the refusal;
 * - `content-type`: the server answers with another content type (a server or proxy that does not
 *   speak protobuf for this resource), or compresses a watch stream asked for uncompressed
 *   (src/kube/client.ts `openWatchStream`); a list page is read as the JSON it is, a watch is reopened as JSON;
 * - `decode-error`: a list body or a watch stream that does not decode as a whole (bad envelope,
 *   bad framing); a list page is fetched again as JSON, a watch stream ends with the error (the
 *   informer backs off and reopens it, as JSON).
 * Each fallback is sticky: the codec speaks JSON from then on, for the life of the process (upstream
 * has no fallback at all; a restart tries protobuf again).
 *
 * One object whose bytes do not decode (./protobuf/decoder.ts reads bytes as upstream's gogo
 * `Unmarshal` does, so only where that fails too) is logged and counted
 * (`..._wire_malformed_total{resource}`) and reaches the informer as an `UndecodableObject` keyed by
 * the name and namespace read from its bytes first (./undecodable.ts), so the cache applies the JSON
 * path's rules for a malformed object of that key; a watch stream ends after such an event and the
 * informer relists, as client-go's StreamWatcher and reflector do (issue 53).
 *
 * Deliberate difference from upstream: none in behaviour; what the controllers see is the same
 * slim object either way, strings that are not UTF-8 included (test/integration/wire-roundtrip.test.ts
 * compares them on a real API server, test/unit/wire-equivalence.test.ts with any bytes).
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { describeError, getRaw, httpError, metricsSinkOf, openWatchStream, uncompressedWatchConfig, type RawResponse, type WatchStarter, type WatchStream } from './client.js';
import type { ListPage, ListPageFn, ListPageOptions } from './listwatch.js';
import type { Logger } from '../log/logger.js';
import { FrameReader, WireFormatError } from './protobuf/envelope.js';
import { defaultKubeContentType, PROTOBUF_CONTENT_TYPE, type KubeContentType } from './contenttype.js';
import { decodeList, decodeWatchEvent, type ProtobufKind } from './protobuf/views.js';
import { UndecodableEventError } from './undecodable.js';

/** Why a codec fell back to JSON (the `reason` label). */
export type WireFallbackReason = 'refused' | 'content-type' | 'decode-error';

/** What a protobuf request accepts: protobuf first, JSON for a resource or server that has none (client-go's `AcceptContentTypes`). */
const PROTOBUF_ACCEPT = `${PROTOBUF_CONTENT_TYPE},application/json`;

/** client-node `Watch`'s inactivity timeout, ms: a stream silent this long is ended with a `TimeoutError`. */
const WATCH_INACTIVITY_TIMEOUT_MS = 30_000;

/** Options of {@link WireCodec}. */
export interface WireCodecOptions {
  kubeConfig: KubeConfig;
  /** The kind of the collection's items. */
  kind: ProtobufKind;
  /** The collection path, e.g. `/api/v1/pods` (the list's; the watch is given its own). */
  path: string;
  /** The `resource` label and log field, e.g. `pods`. */
  resource: string;
  /** What to ask for; `application/json` makes the codec a plain JSON one (default {@link defaultKubeContentType}). */
  contentType?: KubeContentType;
  /**
   * Decode `metadata.labels` (default true). False only where the converter drops them (Pods
   * without `keepLabels`, Leases): the JSON fallback still carries them, and the converter ignores them there too.
   */
  labels?: boolean;
  /** The JSON list (src/kube/informerfactory.ts builds it on {@link getJson}). */
  jsonList: ListPageFn;
  /** The JSON watch (default client-node's `Watch`); not instrumented: the informer factory instruments the codec's watch. */
  jsonWatch?: WatchStarter;
  log: Logger;
}

/**
 * The list and watch functions of one informer, speaking protobuf until a fallback (see the module
 * comment). Build one per informer; `list` and `watch` are bound and can be handed over as they are.
 */
export class WireCodec {
  readonly #o: WireCodecOptions;
  readonly #jsonWatch: WatchStarter;
  #protobuf: boolean;

  constructor(o: WireCodecOptions) {
    this.#o = o;
    this.#jsonWatch = o.jsonWatch ?? new Watch(uncompressedWatchConfig(o.kubeConfig));
    this.#protobuf = (o.contentType ?? defaultKubeContentType()) === PROTOBUF_CONTENT_TYPE;
  }

  /** True while the codec asks for protobuf (false once forced to JSON or fallen back). */
  get protobuf(): boolean {
    return this.#protobuf;
  }

  #fallBack(reason: WireFallbackReason, detail: string): void {
    if (!this.#protobuf) return;
    this.#protobuf = false;
    metricsSinkOf(this.#o.kubeConfig)?.wireFallback?.(this.#o.resource, reason);
    this.#o.log.warn({ resource: this.#o.resource, reason, detail }, 'protobuf not usable for this informer; falling back to JSON');
  }

  #malformed(count: number, detail: string): void {
    const sink = metricsSinkOf(this.#o.kubeConfig);
    for (let i = 0; i < count; i++) sink?.wireMalformed?.(this.#o.resource);
    this.#o.log.warn({ resource: this.#o.resource, count, detail }, 'skipping object whose protobuf did not decode');
  }

  /**
   * One page of the collection ({@link ListPageFn}).
   * @throws {ApiException} for a non-2xx answer other than a protobuf refusal; network errors and aborts.
   */
  readonly list: ListPageFn = async (o: ListPageOptions): Promise<ListPage> => {
    if (!this.#protobuf) return this.#o.jsonList(o);
    const query = { limit: o.limit, continue: o._continue, labelSelector: o.labelSelector, fieldSelector: o.fieldSelector };
    const res = await getRaw(this.#o.kubeConfig, this.#o.path, query, { accept: PROTOBUF_ACCEPT, signal: o.signal, record: true });
    if (res.status === 406 || res.status === 415) {
      await res.body?.cancel();
      this.#fallBack('refused', `HTTP ${res.status}`);
      return this.#o.jsonList(o);
    }
    if (!res.ok) throw httpError(res, await res.text());
    const ct = contentTypeOf(res);
    if (ct !== PROTOBUF_CONTENT_TYPE) {
      this.#fallBack('content-type', ct || 'none');
      return JSON.parse(await res.text()) as ListPage;
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    try {
      const page = decodeList(this.#o.kind, bytes, this.#o.labels ?? true);
      if (page.malformed > 0) this.#malformed(page.malformed, 'list item');
      return page;
    } catch (err) {
      if (!(err instanceof WireFormatError)) throw err;
      this.#fallBack('decode-error', err.message);
      return this.#o.jsonList(o);
    }
  };

  /**
   * The streaming watch ({@link WatchStarter}, shaped like client-node's `Watch.watch`): events go to
   * `callback(type, view)`, `done(err)` is called once when the stream ends (a `TimeoutError` after
   * {@link WATCH_INACTIVITY_TIMEOUT_MS} of silence, an Error with `statusCode` for a non-200 answer,
   * a {@link WireFormatError} when the stream stopped decoding). Never rejects for an HTTP or
   * network failure (it calls `done` first, as client-node does).
   */
  readonly watch: WatchStarter['watch'] = async (path, queryParams, callback, done) => {
    if (!this.#protobuf) return this.#jsonWatch.watch(path, queryParams, callback, done);
    const controller = new AbortController();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = (err: unknown): void => {
      if (finished) return;
      finished = true;
      if (timer !== undefined) clearTimeout(timer);
      controller.abort();
      done(err && timedOut ? new DOMException('The operation was aborted due to timeout', 'TimeoutError') : err);
    };
    const resetTimer = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
      }, WATCH_INACTIVITY_TIMEOUT_MS);
      timer.unref();
    };
    resetTimer();
    let res: WatchStream;
    try {
      res = await openWatchStream(this.#o.kubeConfig, path, queryParams, { accept: PROTOBUF_ACCEPT, signal: controller.signal });
    } catch (err) {
      finish(err);
      return controller;
    }
    if (res.status === 406 || res.status === 415) {
      await res.cancel();
      if (timer !== undefined) clearTimeout(timer);
      this.#fallBack('refused', `HTTP ${res.status}`);
      return this.#jsonWatch.watch(path, queryParams, callback, done);
    }
    if (res.status !== 200) {
      await res.cancel();
      finish(Object.assign(new Error(res.statusText || `HTTP ${res.status}`), { statusCode: res.status }));
      return controller;
    }
    const ct = res.contentType;
    if (ct !== PROTOBUF_CONTENT_TYPE || res.contentEncoding !== undefined) {
      // A stream compressed although asked not to is not read here (undici's request decodes no
      // Content-Encoding); client-node's JSON watch, on fetch, decodes it.
      await res.cancel();
      if (timer !== undefined) clearTimeout(timer);
      this.#fallBack('content-type', res.contentEncoding !== undefined ? `${ct}, content-encoding ${res.contentEncoding}` : ct || 'none');
      return this.#jsonWatch.watch(path, queryParams, callback, done);
    }
    resetTimer();
    void this.#pump(res.body, callback, resetTimer, finish);
    return controller;
  };

  /** Reads the frames of a protobuf watch body until it ends; ends with `finish(err)`. */
  async #pump(
    body: AsyncIterable<Uint8Array>,
    callback: (phase: string, obj: unknown) => void,
    onData: () => void,
    finish: (err: unknown) => void,
  ): Promise<void> {
    const frames = new FrameReader();
    const labels = this.#o.labels ?? true;
    const deliver = (type: string, obj: unknown): void => {
      try {
        callback(type, obj);
      } catch (err) {
        // As client-node's Watch: a throwing callback does not end the stream.
        this.#o.log.error({ resource: this.#o.resource, err: describeError(err) }, 'watch callback threw');
      }
    };
    try {
      for await (const chunk of body) {
        onData();
        for (const f of frames.push(chunk)) {
          const ev = decodeWatchEvent(this.#o.kind, f, labels);
          if (ev.undecodable !== undefined) {
            this.#malformed(1, `watch ${ev.type} event`);
            // The keyed unreadable object reaches the cache (the JSON path's rules), then the
            // stream ends and the informer relists: client-go's StreamWatcher sends a watch.Error
            // for an event it cannot decode and stops, and its reflector relists.
            if (ev.object !== undefined) deliver(ev.type, ev.object);
            finish(new UndecodableEventError(ev.undecodable));
            return;
          }
          deliver(ev.type, ev.object);
        }
      }
      finish(null);
    } catch (err) {
      if (err instanceof WireFormatError) this.#fallBack('decode-error', err.message);
      finish(err);
    }
  }
}

/** The media type of a response, lower-cased, without parameters (`;stream=watch`, `;charset=utf-8`). */
function contentTypeOf(res: RawResponse): string {
  return (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}
