/**
 * The shapes every controller shell takes: read-only caches and the Event sink. Types only; the
 * informers (src/kube/informerfactory.ts) and the Event recorder (src/kube/events.ts, adapted in
 * src/cli/run.ts) implement them.
 *
 * Mirrors client-go's `cache.Store` read side (`k8s.io/client-go/tools/cache/store.go`: `GetByKey`,
 * `List`) and `record.EventRecorder` (`k8s.io/client-go/tools/record/event.go`: `Event`).
 */

/** A read-only cache keyed by `name` (cluster-scoped) or `namespace/name`. */
export interface ReadStore<T> {
  get(key: string): T | undefined;
  list(): readonly T[];
}

/** A reference to the object an Event is about. */
export interface EventObjectRef {
  kind: 'Node' | 'Pod';
  name: string;
  namespace?: string;
  uid: string;
}

/** Where Events go (src/kube/events.ts adapts to this). Never throws. */
export interface EventSink {
  record(ref: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string): void;
}
