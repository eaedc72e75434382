/**
 * The cache behind an informer (`Informer`, src/kube/informer.ts): one slim copy of each object
 * (`Map<key, {obj, rv}>`), the named indexes over it, and the handlers told of every change. The
 * informer's list/watch loop decides *when* the cache changes; this module decides *how*: conversion of
 * raw objects (a malformed one is skipped and counted), the Replace-style diff of a full snapshot,
 * and one watch event's add/update/delete.
 *
 * Mirrors client-go `tools/cache/thread_safe_store.go` + `index.go` (store and indexers),
 * `delta_fifo.go` `Replace` (deletions for vanished objects) and `shared_informer.go`
 * (`HandleDeltas` → `OnAdd` / `OnUpdate(old, new)` / `OnDelete`).
 */
import { describeError } from './client.js';
import { rawKey, rawMeta } from './listwatch.js';
import { UndecodableObject } from './undecodable.js';
import type { Logger } from '../log/logger.js';

/** A handler of newly cached objects. */
export type AddHandler<T> = (obj: T) => void;
/** A handler of changed objects: the previous copy, then the new one. */
export type UpdateHandler<T> = (oldObj: T, newObj: T) => void;
/** A handler of removed objects: the last known copy. */
export type DeleteHandler<T> = (obj: T) => void;
/** Called after each completed full list. */
export type ResyncHandler = () => void;
/** Called whenever the informer's watch stream connects (`true`) or is lost (`false`). */
export type WatchingHandler = (watching: boolean) => void;

/** The handler sets, one per event. */
export interface Handlers<T> {
  add: Set<AddHandler<T>>;
  update: Set<UpdateHandler<T>>;
  delete: Set<DeleteHandler<T>>;
  resync: Set<ResyncHandler>;
  watching: Set<WatchingHandler>;
}

/** One cached object and its resourceVersion (`""` when the object had none). */
export interface Entry<T> {
  obj: T;
  rv: string;
  /** Set in a snapshot being collected: the newest version is malformed, `obj` is the last readable one. */
  stale?: true;
}

/**
 * A list, watch-list or watch event carried a malformed object of a `keepLastReadable` kind of which
 * the cache holds no readable version: the informer treats that list (or stream) as failed and
 * retries with its backoff, as client-go's reflector does when one item cannot be decoded. Judging
 * the collection without the object could make a controller act more (a Node left out of its zone's
 * count can turn a PartialDisruption zone Normal), so the informer stays unsynced (before its first
 * sync) or without a watch stream (after it) until the object can be read: blind, never acting on
 * a set it knows to be incomplete.
 */
export class UnreadableObjectError extends Error {
  /** The object's cache key (`undefined` when even its name could not be read). */
  readonly key: string | undefined;

  /** @param informer the informer's name; @param key the object's cache key. */
  constructor(informer: string, key: string | undefined) {
    super(`informer ${informer}: ${key ?? 'an object without a name'} is malformed and no readable version of it is cached`);
    this.name = 'UnreadableObjectError';
    this.key = key;
  }
}

/** What {@link InformerCache} needs of the informer's options (the same fields, same meaning). */
export interface InformerCacheOptions<T> {
  /** Short name for logs, e.g. `nodes`. */
  name: string;
  /** Wire/typed object → slim object; `undefined` marks it malformed (logged and skipped). */
  convert: (raw: unknown) => T | undefined;
  /** Cache key of a slim object, e.g. `name` or `namespace/name` (client-go `MetaNamespaceKeyFunc`). */
  keyOf: (obj: T) => string;
  /** Named index functions; `byIndex(name, value)` returns the objects whose function yields `value`. */
  indexers?: Record<string, (obj: T) => readonly string[]>;
  log: Logger;
  /**
   * Keep the last readable version of an object whose newer version is malformed (still logged and
   * counted), instead of treating it as absent. For kinds whose absence would make a controller act
   * more: a Node left out of its zone can turn a PartialDisruption zone Normal (a NoExecute taint
   * upstream would not add), a Lease left out sends the health check back to NodeStatus alone.
   * Upstream's store stays stale the same way: client-go's reflector fails the watch and the list
   * that carry an undecodable object, so its store never hears of it. Default false: a malformed
   * Pod or VolumeAttachment is absent, which only withholds actions on it.
   */
  keepLastReadable?: boolean;
}

/**
 * The store, indexes and handlers of one informer. Not thread-safe by design: Node runs one event at
 * a time, and handlers are called synchronously.
 *
 * @typeParam T the slim object type.
 */
export class InformerCache<T> {
  readonly #name: string;
  readonly #convertFn: (raw: unknown) => T | undefined;
  readonly #indexers: Record<string, (obj: T) => readonly string[]> | undefined;
  readonly #log: Logger;
  readonly #keepLastReadable: boolean;
  readonly #handlers: Handlers<T> = { add: new Set(), update: new Set(), delete: new Set(), resync: new Set(), watching: new Set() };
  readonly #store = new Map<string, Entry<T>>();
  readonly #indices = new Map<string, Map<string, Set<string>>>();
  /** Keys (`keepLastReadable` only) whose newest version is malformed: the store holds the last readable one. */
  readonly #unreadable = new Set<string>();
  #malformed = 0;

  /** Cache key of a slim object (the informer's `keyOf`). */
  readonly keyOf: (obj: T) => string;

  constructor(opts: InformerCacheOptions<T>) {
    this.#name = opts.name;
    this.#convertFn = opts.convert;
    this.#keepLastReadable = opts.keepLastReadable ?? false;
    this.keyOf = opts.keyOf;
    this.#indexers = opts.indexers;
    this.#log = opts.log;
    for (const index of Object.keys(opts.indexers ?? {})) this.#indices.set(index, new Map());
  }

  /** Number of cached objects. */
  get size(): number {
    return this.#store.size;
  }

  /** Objects skipped because the converter rejected them (or threw). */
  get malformed(): number {
    return this.#malformed;
  }

  /**
   * Whether the newest version of `key` could not be read, so that {@link get} answers the last
   * readable one (only with `keepLastReadable`; false for an absent key). Controllers count such an
   * object but take no decision on it and write nothing to it (fail closed).
   */
  newestUnreadable(key: string): boolean {
    return this.#unreadable.has(key);
  }

  /** See `Informer.get`. */
  get(key: string): T | undefined {
    return this.#store.get(key)?.obj;
  }

  /** See `Informer.list`. */
  list(): T[] {
    return Array.from(this.#store.values(), (e) => e.obj);
  }

  /** See `Informer.keys`. */
  keys(): string[] {
    return Array.from(this.#store.keys());
  }

  /**
   * See `Informer.byIndex`.
   * @throws {Error} when `index` is not one of the configured indexers.
   */
  byIndex(index: string, value: string): T[] {
    const idx = this.#indices.get(index);
    if (!idx) throw new Error(`informer ${this.#name}: unknown index ${index}`);
    const out: T[] = [];
    for (const key of idx.get(value) ?? []) {
      const e = this.#store.get(key);
      if (e) out.push(e.obj);
    }
    return out;
  }

  /** Registers a handler (see `Informer.on`). @returns a function that unregisters it. */
  on(event: keyof Handlers<T>, handler: AddHandler<T> | UpdateHandler<T> | ResyncHandler | WatchingHandler): () => void {
    const set = this.#handlers[event] as Set<typeof handler>;
    set.add(handler);
    return () => void set.delete(handler);
  }

  /** Calls every handler of `event`; a handler that throws is logged and does not stop the others. */
  emit(event: 'add' | 'delete', obj: T): void;
  emit(event: 'update', oldObj: T, newObj: T): void;
  emit(event: 'resync'): void;
  emit(event: 'watching', on: boolean): void;
  emit(event: keyof Handlers<T>, a?: T | boolean, b?: T): void {
    for (const h of this.#handlers[event]) {
      try {
        if (event === 'update') (h as UpdateHandler<T>)(a as T, b as T);
        else if (event === 'resync') (h as ResyncHandler)();
        else if (event === 'watching') (h as WatchingHandler)(a as boolean);
        else (h as AddHandler<T>)(a as T);
      } catch (err) {
        this.#log.error({ informer: this.#name, event, err: describeError(err) }, 'informer handler threw');
      }
    }
  }

  /**
   * Wire/typed object → slim object through the informer's converter.
   * @returns `undefined` (logged and counted as malformed) when the converter rejects or throws, or
   *   for an `UndecodableObject` (src/kube/undecodable.ts), which never reaches the converter.
   */
  convert(raw: unknown): T | undefined {
    if (raw instanceof UndecodableObject) {
      // Its wire bytes did not decode (src/kube/undecodable.ts): malformed, keyed by the name read first.
      this.#malformed++;
      this.#log.warn({ informer: this.#name, ...rawMeta(raw), reason: raw.reason }, 'skipping object whose wire bytes did not decode');
      return undefined;
    }
    let obj: T | undefined;
    try {
      obj = this.#convertFn(raw);
    } catch {
      obj = undefined;
    }
    if (obj === undefined) {
      this.#malformed++;
      this.#log.warn({ informer: this.#name, ...rawMeta(raw) }, 'skipping malformed object');
    }
    return obj;
  }

  /**
   * Applies a complete snapshot against the store: `delete` for keys that vanished, `add` for new
   * ones, `update(old, new)` for changed resourceVersions. Objects whose resourceVersion did not
   * change keep their existing copy. Mirrors `DeltaFIFO.Replace`.
   */
  replace(fresh: Map<string, Entry<T>>): void {
    for (const [key, old] of [...this.#store]) {
      if (!fresh.has(key)) {
        this.#remove(key, old);
        this.emit('delete', old.obj);
      }
    }
    for (const [key, next] of fresh) {
      if (next.stale) this.#unreadable.add(key);
      else this.#unreadable.delete(key);
      const old = this.#store.get(key);
      if (!old) {
        this.#put(key, next);
        this.emit('add', next.obj);
      } else if (old.rv !== next.rv || next.rv === '') {
        this.#put(key, next, old);
        this.emit('update', old.obj, next.obj);
      }
    }
  }

  /**
   * Applies one ADDED, MODIFIED or DELETED watch event of the raw object `raw` (resourceVersion
   * `rv`) to the store and tells the handlers. A malformed object is treated as absent (a delete),
   * exactly as a relist would treat it, or with `keepLastReadable` leaves the last readable version
   * (marked {@link newestUnreadable}).
   * @returns an {@link UnreadableObjectError}, changing nothing, when with `keepLastReadable` the
   *   object is malformed and the store has no readable version of it: the informer ends the stream
   *   and relists, which fails until the object can be read (client-go's reflector fails the watch
   *   and then the list that carry it). Otherwise `undefined`.
   */
  applyEvent(phase: 'ADDED' | 'MODIFIED' | 'DELETED', raw: unknown, rv: string): UnreadableObjectError | undefined {
    const obj = this.convert(raw);
    if (phase === 'DELETED') {
      const key = obj !== undefined ? this.keyOf(obj) : rawKey(raw);
      const old = key !== undefined ? this.#store.get(key) : undefined;
      if (key !== undefined) this.#unreadable.delete(key);
      if (key !== undefined && old) {
        this.#remove(key, old);
        this.emit('delete', obj ?? old.obj);
      }
    } else if (obj !== undefined) {
      const key = this.keyOf(obj);
      const old = this.#store.get(key);
      this.#unreadable.delete(key);
      const next = { obj, rv };
      if (!old) {
        this.#put(key, next);
        this.emit('add', obj);
      } else if (old.rv !== rv || rv === '') {
        this.#put(key, next, old);
        this.emit('update', old.obj, obj);
      }
    } else if (!this.#keepLastReadable) {
      const key = rawKey(raw);
      const old = key !== undefined ? this.#store.get(key) : undefined;
      if (key !== undefined && old) {
        this.#remove(key, old);
        this.emit('delete', old.obj);
      }
    } else {
      const key = rawKey(raw);
      if (key === undefined || !this.#store.has(key)) return new UnreadableObjectError(this.#name, key);
      this.#unreadable.add(key);
    }
    return undefined;
  }

  /**
   * Records one item of a paginated list in `fresh` (a snapshot being collected for
   * {@link replace}). A malformed item is left out (absent), or, with `keepLastReadable`, keeps the
   * store's current copy of its key, marked stale.
   * @returns an {@link UnreadableObjectError} when with `keepLastReadable` the item is malformed and
   *   the store has no readable version of it: the whole list has failed (the informer retries with
   *   its backoff, as client-go's reflector, whose list fails on one undecodable item). Otherwise `undefined`.
   */
  collectListItem(fresh: Map<string, Entry<T>>, raw: unknown, rv: string): UnreadableObjectError | undefined {
    const obj = this.convert(raw);
    if (obj !== undefined) fresh.set(this.keyOf(obj), { obj, rv });
    else return this.#keepLast(fresh, rawKey(raw));
    return undefined;
  }

  #keepLast(fresh: Map<string, Entry<T>>, key: string | undefined): UnreadableObjectError | undefined {
    if (!this.#keepLastReadable) return undefined;
    const cur = key !== undefined ? this.#store.get(key) : undefined;
    if (key === undefined || !cur) return new UnreadableObjectError(this.#name, key);
    fresh.set(key, { ...cur, stale: true });
    return undefined;
  }

  /**
   * Records one event of a watch-list's initial phase in `fresh` (a snapshot being collected for
   * {@link replace}); nothing reaches the store or the handlers. A malformed object counts as in a
   * paginated list ({@link collectListItem}).
   * @returns as {@link collectListItem}: an {@link UnreadableObjectError} fails the whole watch-list.
   */
  collectEvent(fresh: Map<string, Entry<T>>, phase: 'ADDED' | 'MODIFIED' | 'DELETED', raw: unknown, rv: string): UnreadableObjectError | undefined {
    const obj = this.convert(raw);
    const key = obj !== undefined ? this.keyOf(obj) : rawKey(raw);
    if (key === undefined) return this.#keepLastReadable && obj === undefined ? new UnreadableObjectError(this.#name, key) : undefined;
    if (phase === 'DELETED') fresh.delete(key);
    else if (obj !== undefined) fresh.set(key, { obj, rv });
    else {
      fresh.delete(key);
      return this.#keepLast(fresh, key);
    }
    return undefined;
  }

  #indexValues(index: string, obj: T): readonly string[] {
    try {
      return this.#indexers?.[index]?.(obj) ?? [];
    } catch (err) {
      this.#log.error({ informer: this.#name, index, err: describeError(err) }, 'indexer failed');
      return [];
    }
  }

  #put(key: string, next: Entry<T>, old?: Entry<T>): void {
    if (old) this.#unindex(key, old.obj);
    this.#store.set(key, next);
    for (const [index, byValue] of this.#indices) {
      for (const v of this.#indexValues(index, next.obj)) {
        let keys = byValue.get(v);
        if (!keys) byValue.set(v, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  #remove(key: string, old: Entry<T>): void {
    this.#unindex(key, old.obj);
    this.#store.delete(key);
  }

  #unindex(key: string, obj: T): void {
    for (const [index, byValue] of this.#indices) {
      for (const v of this.#indexValues(index, obj)) {
        const keys = byValue.get(v);
        keys?.delete(key);
        if (keys?.size === 0) byValue.delete(v);
      }
    }
  }
}
