/**
 * A small self-restarting list-then-watch loop for the simulator's kubelet side (pods in the
 * fleet's namespace, the fleet's VolumeAttachments). It is deliberately simpler than an informer:
 * the simulator keeps its own cache and only needs every change delivered at least once.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../../../src/util/clock.js';
import { describeError } from '../../../src/kube/client.js';
import type { SimLogger } from './log.js';

/** Watch event types delivered to {@link ListWatchOptions.onEvent}. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Options of {@link startListWatch}. */
export interface ListWatchOptions {
  /** Short name for logs, for example `pods`. */
  name: string;
  kubeConfig: KubeConfig;
  /** API path of the collection, for example `/api/v1/namespaces/ns/pods`. */
  path: string;
  labelSelector?: string;
  /** Lists the collection; returns the raw items and the list's resourceVersion. */
  list: () => Promise<{ items: unknown[]; resourceVersion: string }>;
  /** Called with the full item set after each (re)list. */
  onSync: (items: unknown[]) => void;
  /** Called for each watch event, with the raw wire object. */
  onEvent: (type: WatchEventType, obj: unknown) => void;
  clock: Clock;
  logger: SimLogger;
}

/** Handle of a running list-watch loop. */
export interface ListWatchHandle {
  /** Stops the loop and aborts the open watch. Idempotent. */
  stop(): void;
  /** Resolves after the first successful list has been delivered through `onSync`. */
  readonly synced: Promise<void>;
}

/**
 * Server-side watch timeout, seconds. Below client-node's 30 s inactivity timeout so a quiet
 * watch ends cleanly and resumes from its resourceVersion instead of erroring.
 */
const WATCH_TIMEOUT_SECONDS = 20;

function resourceVersionOf(obj: unknown): string | undefined {
  const rv = (obj as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}

/**
 * Starts list-then-watch: list, deliver, watch from the list's resourceVersion, resume each time
 * the watch ends, relist on 410 Gone or any error (with 0.5 s → 30 s exponential backoff).
 * Callback errors are logged and never stop the loop.
 * Mirrors the contract of client-go's `tools/cache/reflector.go` `ListAndWatch`.
 * @returns a handle to stop the loop. Never throws.
 */
export function startListWatch(opts: ListWatchOptions): ListWatchHandle {
  const watcher = new Watch(opts.kubeConfig);
  let stopped = false;
  let abort: AbortController | undefined;
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));

  const safe = (what: string, fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      opts.logger.error({ watch: opts.name, err: describeError(err) }, `sim ${what} handler failed`);
    }
  };

  /** One watch request. Resolves with the last resourceVersion seen, or `undefined` when a relist is needed. */
  const watchOnce = (rv: string): Promise<string | undefined> =>
    new Promise((resolve, reject) => {
      let last: string | undefined = rv;
      let gone = false;
      const query: Record<string, string | number | boolean | undefined> = {
        resourceVersion: rv,
        allowWatchBookmarks: true,
        timeoutSeconds: WATCH_TIMEOUT_SECONDS,
        labelSelector: opts.labelSelector,
      };
      watcher
        .watch(
          opts.path,
          query,
          (type: string, obj: unknown) => {
            if (type === 'BOOKMARK') {
              last = resourceVersionOf(obj) ?? last;
              return;
            }
            if (type === 'ERROR') {
              // 410 Gone (resourceVersion too old) and every other in-band error mean: relist.
              gone = true;
              opts.logger.debug({ watch: opts.name, status: obj }, 'sim watch error event; relisting');
              return;
            }
            if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
            last = resourceVersionOf(obj) ?? last;
            safe('watch event', () => opts.onEvent(type, obj));
          },
          (err: unknown) => {
            abort = undefined;
            if (gone) resolve(undefined);
            else if (!err || (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')))
              resolve(last);
            else reject(err instanceof Error ? err : new Error(describeError(err)));
          },
        )
        .then(
          (controller) => {
            abort = controller;
            if (stopped) controller.abort();
          },
          (err: unknown) => reject(err instanceof Error ? err : new Error(describeError(err))),
        );
    });

  const run = async (): Promise<void> => {
    let backoffMs = 500;
    while (!stopped) {
      try {
        const { items, resourceVersion } = await opts.list();
        if (stopped) return;
        safe('sync', () => opts.onSync(items));
        markSynced();
        backoffMs = 500;
        let rv: string | undefined = resourceVersion;
        while (!stopped && rv !== undefined) rv = await watchOnce(rv);
      } catch (err) {
        if (stopped) return;
        opts.logger.warn({ watch: opts.name, err: describeError(err), backoffMs }, 'sim list/watch failed; retrying');
        await opts.clock.sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 30_000);
      }
    }
  };
  void run();

  return {
    synced,
    stop() {
      stopped = true;
      abort?.abort();
      abort = undefined;
      markSynced();
    },
  };
}
