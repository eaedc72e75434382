import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from '../../src/util/clock.js';
import { EVICTION_RATE_LIMITER_BURST, SwappableTokenBucket } from '../../src/nodelifecycle/ratelimit.js';
import { TokenBucket, alwaysRateLimiter, neverRateLimiter, rateLimiterFor } from '../../src/util/tokenbucket.js';

/** Calls tryAccept every `stepMs` for `totalMs` and returns the offsets (ms) of accepted calls. */
function acceptTimes(clock: FakeClock, limiter: { tryAccept(): boolean }, stepMs: number, totalMs: number): number[] {
  const start = clock.now();
  const out: number[] = [];
  for (let t = 0; t <= totalMs; t += stepMs) {
    clock.set(start + t);
    if (limiter.tryAccept()) out.push(t);
  }
  return out;
}

/** Asserts that the first token comes exactly `ms` milliseconds from now, and takes it. */
function assertFirstTokenAfter(clock: FakeClock, limiter: { tryAccept(): boolean }, ms: number): void {
  assert.equal(limiter.tryAccept(), false, 'no token now');
  clock.advance(ms - 1);
  assert.equal(limiter.tryAccept(), false, `no token after ${ms - 1} ms`);
  clock.advance(1);
  assert.equal(limiter.tryAccept(), true, `a token after ${ms} ms`);
}

describe('TokenBucket', () => {
  test('starts full with burst 1: one immediate token, then none', () => {
    const clock = new FakeClock();
    const b = new TokenBucket(clock, 0.1);
    assert.equal(EVICTION_RATE_LIMITER_BURST, 1);
    assert.equal(b.burst, 1);
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), false);
  });

  test('refills at qps: at 0.1/s the next token comes exactly 10 s later', () => {
    const clock = new FakeClock();
    const b = new TokenBucket(clock, 0.1);
    assert.equal(b.tryAccept(), true);
    assertFirstTokenAfter(clock, b, 10_000);
    assert.equal(b.tryAccept(), false);
  });

  test('refused calls do not delay the refill (polling every 100 ms like the tainting pass)', () => {
    const clock = new FakeClock();
    const b = new TokenBucket(clock, 0.1);
    assert.deepEqual(acceptTimes(clock, b, 100, 30_000), [0, 10_000, 20_000, 30_000]);
  });

  test('the bucket never holds more than burst tokens', () => {
    const clock = new FakeClock();
    const b = new TokenBucket(clock, 2);
    clock.advance(60_000);
    assert.equal(b.tokens(), 1);
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), false);
  });

  test('a larger burst gives that many immediate tokens', () => {
    const clock = new FakeClock();
    const b = new TokenBucket(clock, 1, 3);
    assert.deepEqual([b.tryAccept(), b.tryAccept(), b.tryAccept(), b.tryAccept()], [true, true, true, false]);
  });

  test('a clock stepping backwards refills nothing', () => {
    const clock = new FakeClock(1_000_000);
    const b = new TokenBucket(clock, 1);
    assert.equal(b.tryAccept(), true);
    clock.set(500_000);
    assert.equal(b.tryAccept(), false);
  });

  test('rejects invalid parameters', () => {
    const clock = new FakeClock();
    assert.throws(() => new TokenBucket(clock, 0), RangeError);
    assert.throws(() => new TokenBucket(clock, -1), RangeError);
    assert.throws(() => new TokenBucket(clock, Infinity), RangeError);
    assert.throws(() => new TokenBucket(clock, 1, 0), RangeError);
    assert.throws(() => new TokenBucket(clock, 1, 1.5), RangeError);
  });

  test('property: over a window, accepted count is at most burst + window * qps and the gaps are >= 1/qps', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 50, noNaN: true }), fc.integer({ min: 1, max: 200 }), (qps, stepMs) => {
        const clock = new FakeClock();
        const b = new TokenBucket(clock, qps);
        const window = 20_000;
        const times = acceptTimes(clock, b, stepMs, window);
        assert.ok(times.length <= 1 + (window * qps) / 1000 + 1e-6);
        for (let i = 1; i < times.length; i++) {
          assert.ok((times[i] as number) - (times[i - 1] as number) >= 1000 / qps - 1e-3);
        }
        // With polling, each token is taken within one step of being due.
        assert.ok(times.length >= 1 + Math.floor(window / (1000 / qps + stepMs)));
      }),
    );
  });
});

describe('TokenBucket semantic options (one bucket, each caller\'s semantics)', () => {
  test('initialTokens: default starts full (burst tokens at once); 0 starts empty, first token after 1/qps', () => {
    const clock = new FakeClock();
    const full = new TokenBucket(clock, 1, 3);
    assert.deepEqual([full.tryAccept(), full.tryAccept(), full.tryAccept(), full.tryAccept()], [true, true, true, false]);
    const empty = new TokenBucket(clock, 1, 3, { initialTokens: 0 });
    assertFirstTokenAfter(clock, empty, 1000);
    assert.equal(new TokenBucket(clock, 1, 3, { initialTokens: 99 }).tokens(), 3, 'clamped to burst');
  });

  test('tryAccept (tainting pass, node-affinity evictions, Event spam filter) never goes into debt', () => {
    const clock = new FakeClock();
    const b = new TokenBucket(clock, 1);
    assert.equal(b.tryAccept(), true);
    for (let i = 0; i < 10; i++) assert.equal(b.tryAccept(), false);
    assert.equal(b.tokens(), 0, 'refusals take nothing');
    assertFirstTokenAfter(clock, b, 1000);
  });

  test('reserve (work queue BucketRateLimiter) always takes a token, goes into debt and returns the wait in ms', () => {
    const clock = new FakeClock();
    const b = new TokenBucket(clock, 10, 2);
    assert.equal(b.reserve(), 0);
    assert.equal(b.reserve(), 0);
    assert.ok(Math.abs(b.reserve() - 100) < 1e-9);
    assert.ok(Math.abs(b.reserve() - 200) < 1e-9);
    assert.ok(Math.abs(b.tokens() + 2) < 1e-9, 'two tokens of debt');
    assert.equal(b.tryAccept(), false, 'a bucket in debt refuses tryAccept');
    clock.advance(300); // pays back the debt and refills one token
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), false);
  });

  test('reserve with a clock stepping backwards refills nothing', () => {
    const clock = new FakeClock(1_000_000);
    const b = new TokenBucket(clock, 1);
    assert.equal(b.reserve(), 0);
    clock.set(500_000);
    assert.ok(Math.abs(b.reserve() - 1000) < 1e-9);
  });
});

describe('rateLimiterFor and the fixed limiters', () => {
  test('qps <= 0 never accepts and reports 0', () => {
    const clock = new FakeClock();
    for (const qps of [0, -1]) {
      const l = rateLimiterFor(clock, qps);
      assert.equal(l, neverRateLimiter);
      assert.equal(l.qps, 0);
      clock.advance(3_600_000);
      assert.equal(l.tryAccept(), false);
    }
  });

  test('Infinity always accepts', () => {
    const l = rateLimiterFor(new FakeClock(), Infinity);
    assert.equal(l, alwaysRateLimiter);
    assert.ok(Array.from({ length: 100 }, () => l.tryAccept()).every(Boolean));
  });

  test('NaN is rejected', () => {
    assert.throws(() => rateLimiterFor(new FakeClock(), Number.NaN), RangeError);
  });
});

describe('SwappableTokenBucket', () => {
  test('qps getter reports the configured rate', () => {
    const clock = new FakeClock();
    assert.equal(new SwappableTokenBucket(clock, 0.1).qps, 0.1);
    assert.equal(new SwappableTokenBucket(clock, 0).qps, 0);
  });

  test('qps 0 never accepts', () => {
    const clock = new FakeClock();
    const l = new SwappableTokenBucket(clock, 0);
    assert.deepEqual(acceptTimes(clock, l, 1_000, 600_000), []);
    assert.equal(l.tokens(), 0);
  });

  test('swap to the same rate is a no-op and keeps the bucket state', () => {
    const clock = new FakeClock();
    const l = new SwappableTokenBucket(clock, 1);
    assert.equal(l.tryAccept(), true);
    assert.equal(l.swap(1), false);
    assert.equal(l.tryAccept(), false);
  });

  test('swap does not hand out a free token: an empty bucket swapped gives an empty bucket', () => {
    const clock = new FakeClock();
    const l = new SwappableTokenBucket(clock, 0.1);
    assert.equal(l.tryAccept(), true);
    assert.equal(l.tryAccept(), false);
    assert.equal(l.swap(0.01), true);
    assert.equal(l.qps, 0.01);
    // The new bucket was drained at swap time, so its first token is 1/0.01 s = 100 s later.
    assertFirstTokenAfter(clock, l, 100_000);
  });

  test('swap of a bucket that has a token gives a full new bucket', () => {
    const clock = new FakeClock();
    const l = new SwappableTokenBucket(clock, 0.1);
    assert.equal(l.swap(5), true);
    assert.equal(l.tryAccept(), true);
    assertFirstTokenAfter(clock, l, 200);
  });

  test('swap to 0 stops accepting; swap from never to positive starts drained', () => {
    const clock = new FakeClock();
    const l = new SwappableTokenBucket(clock, 0.1);
    assert.equal(l.swap(0), true);
    assert.equal(l.qps, 0);
    clock.advance(60_000);
    assert.equal(l.tryAccept(), false);
    assert.equal(l.swap(0.5), true);
    assert.equal(l.qps, 0.5);
    assertFirstTokenAfter(clock, l, 2_000);
  });

  test('deliberate difference: after swap(0), swap(1) takes effect (upstream reports QPS 1 for never)', () => {
    const clock = new FakeClock();
    const l = new SwappableTokenBucket(clock, 0.1);
    l.swap(0);
    assert.equal(l.swap(1), true);
    assert.equal(l.qps, 1);
    clock.advance(1_000);
    assert.equal(l.tryAccept(), true);
  });

  test('swap(NaN) is rejected and leaves the limiter unchanged', () => {
    const l = new SwappableTokenBucket(new FakeClock(), 0.1);
    assert.throws(() => l.swap(Number.NaN), RangeError);
    assert.equal(l.qps, 0.1);
    assert.equal(l.tryAccept(), true);
  });

  test('property: any swap sequence never yields more tokens than an unswapped full bucket at the highest rate', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ dtMs: fc.integer({ min: 0, max: 5_000 }), qps: fc.constantFrom(0, 0.1, 0.5, 1, 2) }), {
          minLength: 1,
          maxLength: 30,
        }),
        (steps) => {
          const clock = new FakeClock();
          const l = new SwappableTokenBucket(clock, steps[0]?.qps ?? 0);
          const start = clock.now();
          let accepted = 0;
          for (const s of steps) {
            clock.advance(s.dtMs);
            l.swap(s.qps);
            for (let i = 0; i < 3; i++) if (l.tryAccept()) accepted++;
          }
          const elapsedS = (clock.now() - start) / 1000;
          const maxQps = Math.max(...steps.map((s) => s.qps));
          assert.ok(accepted <= 1 + elapsedS * maxQps + 1e-6, `accepted ${accepted} in ${elapsedS}s at <= ${maxQps}/s`);
        },
      ),
    );
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", ratelimit.ts): the hook that lets
// the zone part recompute zone states before a token goes out, and the token reads readyflips.ts and
// tainting.ts decide on. A hook skipped when a token is there would let a token out at a stale rate.
describe('SwappableTokenBucket beforeToken, hasToken, drain, tokens', () => {
  /** A limiter at `qps` whose hook counts its calls. */
  function hooked(clock: FakeClock, qps: number): { l: SwappableTokenBucket; calls: () => number } {
    let n = 0;
    const l = new SwappableTokenBucket(clock, qps, EVICTION_RATE_LIMITER_BURST, () => n++);
    return { l, calls: () => n };
  }

  test('beforeToken runs before a token is handed out (a full bucket)', () => {
    const { l, calls } = hooked(new FakeClock(), 1);
    assert.equal(l.tryAccept(), true);
    assert.equal(calls(), 1);
  });

  test('beforeToken does not run at rate 0 (no token can come)', () => {
    const clock = new FakeClock();
    const { l, calls } = hooked(clock, 0);
    clock.advance(60_000);
    assert.equal(l.tryAccept(), false);
    assert.equal(calls(), 0);
  });

  test('beforeToken does not run while the bucket is more than TOKEN_LOOKAHEAD_MS of refill short of a token', () => {
    const clock = new FakeClock();
    const { l, calls } = hooked(clock, 1);
    assert.equal(l.tryAccept(), true);
    clock.advance(850); // 0.85 token + 0.1 of lookahead < 1
    assert.equal(l.tryAccept(), false);
    assert.equal(calls(), 1);
  });

  test('beforeToken runs within TOKEN_LOOKAHEAD_MS of the next token, and at exactly its edge', () => {
    const clock = new FakeClock();
    const { l, calls } = hooked(clock, 1);
    assert.equal(l.tryAccept(), true);
    clock.advance(950); // 0.95 + 0.1 >= 1: the hook runs, the token is not there yet
    assert.equal(l.tryAccept(), false);
    assert.equal(calls(), 2);
    // At 10 tokens/s the lookahead is a whole token: an empty bucket is exactly at the edge.
    const c2 = new FakeClock();
    const h2 = hooked(c2, 10);
    assert.equal(h2.l.tryAccept(), true);
    assert.equal(h2.l.tryAccept(), false);
    assert.equal(h2.calls(), 2);
  });

  test('hasToken: true with a token, false without, true again at exactly one token', () => {
    const clock = new FakeClock();
    const l = new SwappableTokenBucket(clock, 1);
    assert.equal(l.hasToken(), true);
    assert.equal(l.tryAccept(), true);
    assert.equal(l.hasToken(), false);
    clock.advance(1_000);
    assert.equal(l.tokens(), 1);
    assert.equal(l.hasToken(), true);
  });

  test('drain takes the token without calling beforeToken', () => {
    const { l, calls } = hooked(new FakeClock(), 1);
    l.drain();
    assert.equal(l.hasToken(), false);
    assert.equal(l.tryAccept(), false);
    assert.equal(calls(), 0);
  });

  test('tokens: the bucket count for a finite rate, Infinity for always, 0 for never', () => {
    const clock = new FakeClock();
    const l = new SwappableTokenBucket(clock, 2);
    l.drain();
    clock.advance(250);
    assert.equal(l.tokens(), 0.5);
    assert.equal(new SwappableTokenBucket(clock, Infinity).tokens(), Infinity);
    assert.equal(new SwappableTokenBucket(clock, 0).tokens(), 0);
  });

  test('swap(NaN) names itself in the RangeError', () => {
    assert.throws(() => new SwappableTokenBucket(new FakeClock(), 1).swap(Number.NaN), /SwappableTokenBucket\.swap: qps is NaN/);
  });
});
