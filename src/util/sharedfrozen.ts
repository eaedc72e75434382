/**
 * Frozen values shared between cached objects by content: pods of one ReplicaSet or DaemonSet
 * revision carry identical labels, tolerations and owner references, so 150,000 pods hold a few
 * thousand distinct sets of each. Weak references let a value go once nothing else holds it
 * (rollouts change `pod-template-hash` and the owner), and the table drops its key then. One table
 * per kind of value; the key is whatever identifies the content exactly (canonical JSON in
 * src/kube/objects.ts, the wire bytes in src/kube/protobuf/decoder.ts).
 *
 * Pure apart from the garbage collector: no I/O, no clock.
 */
export class SharedFrozen<T extends object> {
  readonly #values = new Map<string, WeakRef<T>>();
  readonly #cleanup = new FinalizationRegistry<string>((key) => {
    if (this.#values.get(key)?.deref() === undefined) this.#values.delete(key);
  });

  /**
   * The shared value for `key`; `make()` (which must return a frozen value) the first time, or
   * again once the earlier value was collected.
   * @throws whatever `make` throws (nothing is stored then).
   */
  get(key: string, make: () => T): T {
    const hit = this.#values.get(key)?.deref();
    if (hit !== undefined) return hit;
    const value = make();
    this.#values.set(key, new WeakRef(value));
    this.#cleanup.register(value, key);
    return value;
  }
}
