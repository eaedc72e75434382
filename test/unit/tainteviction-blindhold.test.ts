/**
 * The sight hold of the taint eviction controller (issue 14 item 4; docs/taint-eviction.md difference 10):
 * the pure rule (blindhold.ts `sightHoldUntilMs`, decision.ts `decidePodEviction` with `sight`), the
 * blind-interval tracker, and the informer's `watching` signal that feeds it. The controller shell
 * is covered in tainteviction-controller.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { Informer } from '../../src/kube/informer.js';
import type { WatchLike } from '../../src/kube/listwatch.js';
import type { Pod, Taint, Toleration } from '../../src/kube/objects.js';
import { decidePodEviction } from '../../src/tainteviction/decision.js';
import { sightHoldUntilMs, type SightInput } from '../../src/tainteviction/blindhold.js';
import { SightTracker } from '../../src/kube/sight.js';

const T0 = Date.UTC(2026, 0, 1);
const S = 1000;

function pod(tolerations: Toleration[]): Pod {
  return {
    namespace: 'default',
    name: 'p',
    uid: 'uid-p',
    resourceVersion: '1',
    nodeName: 'node1',
    phase: 'Running',
    creationTimestamp: T0 - 3600 * S,
    conditions: [],
    tolerations,
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
  };
}

const TAINT: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: T0 };
const tolerate = (seconds: number): Toleration => ({ key: TAINT.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
const blindFor = (fromMs: number, toMs: number, holdMs = 40 * S): SightInput => ({ lastBlind: { fromMs, toMs }, holdMs });

describe('sightHoldUntilMs', () => {
  test('due at or before the end of the last blind interval: held until its end + the hold', () => {
    const sight = blindFor(T0 + 5 * S, T0 + 25 * S);
    assert.equal(sightHoldUntilMs(T0 + 15 * S, sight), T0 + 65 * S, 'due inside');
    assert.equal(sightHoldUntilMs(T0 + 25 * S, sight), T0 + 65 * S, 'due at the end');
    assert.equal(sightHoldUntilMs(T0, sight), T0 + 65 * S, 'due before it began, not yet done');
  });

  test('due after sight returned, or no blind interval: not held', () => {
    assert.equal(sightHoldUntilMs(T0 + 25 * S + 1, blindFor(T0 + 5 * S, T0 + 25 * S)), undefined);
    assert.equal(sightHoldUntilMs(T0, { lastBlind: undefined, holdMs: 40 * S }), undefined);
    assert.equal(sightHoldUntilMs(T0, undefined), undefined);
  });
});

describe('decidePodEviction with sight', () => {
  test('the issue\'s scenario: 15 s toleration, blind from +5 s to +25 s → held until +65 s, then delete-now', () => {
    const p = pod([tolerate(15)]);
    const sight = blindFor(T0 + 5 * S, T0 + 25 * S);
    assert.equal(decidePodEviction(p, [TAINT], T0 + 25 * S).kind, 'delete-now', 'without sight (the old behaviour)');
    const held = decidePodEviction(p, [TAINT], T0 + 25 * S, { sight });
    assert.equal(held.kind, 'delete-at');
    assert.equal(held.kind === 'delete-at' && held.atMs, T0 + 65 * S);
    assert.equal(held.kind === 'delete-at' && held.heldForSightFromMs, T0 + 15 * S);
    assert.equal(decidePodEviction(p, [TAINT], T0 + 64 * S, { sight }).kind, 'delete-at');
    assert.equal(decidePodEviction(p, [TAINT], T0 + 65 * S, { sight }).kind, 'delete-now');
  });

  test('an untolerated taint that appeared while blind is held from when the pod was exposed to it', () => {
    const p = pod([]);
    const added: Taint = { key: 'example.com/drain', effect: 'NoExecute', timeAdded: T0 + 10 * S };
    const d = decidePodEviction(p, [added], T0 + 26 * S, { sight: blindFor(T0 + 5 * S, T0 + 25 * S) });
    assert.equal(d.kind === 'delete-at' && d.heldForSightFromMs, T0 + 10 * S);
    // One first seen after sight returned is due then: deleted at once, as upstream.
    const later: Taint = { key: 'example.com/drain', effect: 'NoExecute', timeAdded: T0 + 26 * S };
    assert.equal(decidePodEviction(p, [later], T0 + 26 * S, { sight: blindFor(T0 + 5 * S, T0 + 25 * S) }).kind, 'delete-now');
  });

  test('property: sight only ever delays — never deletes where the decision without it would not, nor earlier', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 600 }), // tolerationSeconds
        fc.integer({ min: 0, max: 1200 }), // blind from, s after T0
        fc.integer({ min: 0, max: 600 }), // blind length, s
        fc.integer({ min: 0, max: 2400 }), // now, s after T0
        fc.integer({ min: 1, max: 120 }), // hold, s
        fc.boolean(), // tolerated at all
        (tolSeconds, fromS, lenS, nowS, holdS, tolerated) => {
          const p = pod(tolerated ? [tolerate(tolSeconds)] : []);
          const toS = Math.min(nowS, fromS + lenS); // a blind interval has ended by now
          const sight = blindFor(T0 + Math.min(fromS, toS) * S, T0 + toS * S, holdS * S);
          const plain = decidePodEviction(p, [TAINT], T0 + nowS * S);
          const withSight = decidePodEviction(p, [TAINT], T0 + nowS * S, { sight });
          if (withSight.kind === 'delete-now') assert.equal(plain.kind, 'delete-now');
          if (plain.kind === 'none') assert.equal(withSight.kind, 'none');
          if (plain.kind === 'delete-at') assert.deepEqual(withSight, plain, 'a future deadline is never touched');
          if (withSight.kind === 'delete-at' && plain.kind === 'delete-now') {
            assert.ok(withSight.atMs > T0 + nowS * S);
            assert.equal(withSight.atMs, T0 + (toS + holdS) * S);
          }
        },
      ),
    );
  });
});

describe('SightTracker', () => {
  test('records a blind stretch of at least minBlindMs, from the first loss to the regain', () => {
    const s = new SightTracker(2000);
    s.observe(true, T0);
    s.observe(false, T0 + 1000);
    s.observe(false, T0 + 1500); // a repeat keeps the start
    assert.equal(s.blindSinceMs(), T0 + 1000);
    assert.deepEqual(s.observe(true, T0 + 3000), { fromMs: T0 + 1000, toMs: T0 + 3000 });
    assert.deepEqual(s.lastBlind(), { fromMs: T0 + 1000, toMs: T0 + 3000 });
    assert.equal(s.blindSinceMs(), undefined);
  });

  test('a reconnect shorter than minBlindMs is not recorded and keeps the previous interval', () => {
    const s = new SightTracker(2000);
    s.observe(true, T0);
    s.observe(false, T0 + 1000);
    s.observe(true, T0 + 5000);
    s.observe(false, T0 + 10_000);
    assert.equal(s.observe(true, T0 + 11_999), undefined);
    assert.deepEqual(s.lastBlind(), { fromMs: T0 + 1000, toMs: T0 + 5000 });
  });

  test('the time before the first sight is not a blind interval (restart-safe deadlines)', () => {
    const s = new SightTracker(2000);
    s.observe(false, T0);
    assert.equal(s.observe(true, T0 + 60_000), undefined);
    assert.equal(s.lastBlind(), undefined);
  });

  test('rejects a negative threshold', () => {
    assert.throws(() => new SightTracker(-1), RangeError);
  });
});

/** A watch whose streams connect at once and end when told. */
class ScriptedWatch implements WatchLike {
  readonly ends: ((err?: unknown) => void)[] = [];
  async watch(_p: string, _q: Record<string, unknown>, _cb: (phase: string, obj: unknown) => void, done: (err: unknown) => void): Promise<AbortController> {
    const c = new AbortController();
    let ended = false;
    const end = (err?: unknown): void => {
      if (ended) return;
      ended = true;
      done(err ?? null);
    };
    c.signal.addEventListener('abort', () => end());
    this.ends.push(end);
    return c;
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

describe("Informer 'watching' event (the sight signal)", () => {
  test('fires synchronously on each change of isWatching(), at the time of the change', async () => {
    const clock = new FakeClock(T0);
    const watch = new ScriptedWatch();
    const informer = new Informer<{ name: string }>({
      name: 'nodes',
      path: '/api/v1/nodes',
      list: async () => ({ metadata: { resourceVersion: '1' }, items: [] }),
      convert: (raw) => raw as { name: string },
      keyOf: (o) => o.name,
      log: silentLogger,
      clock,
      watch,
      watchList: false, // list+watch; the watch-list's sight signal is in test/unit/informer.test.ts
      random: () => 0,
    });
    const seen: [boolean, boolean, number][] = [];
    informer.on('watching', (on) => void seen.push([on, informer.isWatching(), clock.now() - T0]));
    await informer.start();
    await flush();
    assert.deepEqual(seen, [[true, true, 0]]);
    await clock.advanceAsync(5000);
    watch.ends.at(-1)?.(new Error('connection refused'));
    await flush();
    assert.deepEqual(seen.at(-1), [false, false, 5000]);
    await clock.advanceAsync(2000); // backoff (0 with random() = 0), then the stream reconnects
    await flush();
    assert.equal(seen.at(-1)?.[0], true);
    informer.stop();
    assert.deepEqual(seen.at(-1)?.slice(0, 2), [false, false], 'stop() reports the loss too');
  });
});
