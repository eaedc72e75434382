/**
 * A Map that tells its owner of every change, so an in-memory cluster's derived views (the cached
 * `list()` arrays, the per-node indexes) stay right even when a test writes the map directly to
 * model a cache that changed without its informer handler running. Pure: no I/O.
 */

/** Called after a key's value changed: `old` the value before (undefined: added), `cur` after (undefined: deleted). */
export type MapChange<V> = (key: string, old: V | undefined, cur: V | undefined) => void;

/**
 * `Map<string, V>` whose `set`, `delete` and `clear` call `onChange` after they apply. Reads and
 * iteration are the plain Map's. Never throws (unless `onChange` does).
 */
export class ObservedMap<V> extends Map<string, V> {
  readonly #onChange: MapChange<V>;

  /** @param onChange told of every change after it applied. */
  constructor(onChange: MapChange<V>) {
    super();
    this.#onChange = onChange;
  }

  override set(key: string, value: V): this {
    const old = super.get(key);
    super.set(key, value);
    this.#onChange(key, old, value);
    return this;
  }

  override delete(key: string): boolean {
    const old = super.get(key);
    const had = super.delete(key);
    if (had) this.#onChange(key, old, undefined);
    return had;
  }

  override clear(): void {
    const entries = [...super.entries()];
    super.clear();
    for (const [k, v] of entries) this.#onChange(k, v, undefined);
  }
}
