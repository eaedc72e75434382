/**
 * The pod condition types the cached (slim) Pod keeps. At 150,000 pods every condition object
 * costs ~70 B of heap, and the kubelet posts four or five per pod (Initialized, Ready,
 * ContainersReady, PodScheduled, and PodReadyToStartContainers since 1.29), so src/kube/objects.ts
 * `toPod` keeps only the types some decision reads. Pure: no I/O.
 *
 * Every reader of a pod's conditions in src/ (reads of any other type would see nothing):
 * - `Ready`: the node lifecycle controller's pod marking (src/nodelifecycle/health.ts
 *   `podNeedsNotReadyMark`, src/nodelifecycle/writer.ts `markPodNotReady`, which copies the whole
 *   condition, reason, message and times, into its patch as upstream `MarkPodsNotReady` does), and
 *   the same in shadow mode (src/shadow/writers.ts) and the in-memory writer (src/inmemory/writer.ts).
 * - `DisruptionTarget`: taint eviction's "already evicted" (src/tainteviction/writer.ts
 *   `hasDisruptionTarget`), the pod GC's orphan condition (src/podgc/decision.ts `orphanCondition`), shadow
 *   mode's overlay and report (src/shadow/overlay.ts, src/shadow/report.ts).
 * - `PodScheduled`: taint eviction's exposure start (src/tainteviction/decision.ts
 *   `podExposureStartMs`, its status and lastTransitionTime).
 * A new reader of another type must add it here, or it silently reads "absent".
 */
export const CACHED_POD_CONDITION_TYPES: ReadonlySet<string> = new Set(['Ready', 'DisruptionTarget', 'PodScheduled']);
