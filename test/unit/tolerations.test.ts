import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Taint, Toleration } from '../../src/kube/objects.js';
import {
  FOREVER,
  compareNumericValues,
  getMatchingTolerations,
  getMinTolerationTimeMs,
  noExecuteTaints,
  sameNoExecuteTaints,
  toleratesTaint,
  tolerationTimeMs,
  type TolerationTimeMs,
} from '../../src/tainteviction/tolerations.js';

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
const KEYS = ['a', 'b', 'node.kubernetes.io/unreachable'] as const;
const VALUES = ['', 'x', 'y', '0', '1', '-2', '10', '+3', '9223372036854775808', ' 1'] as const;

const taintArb: fc.Arbitrary<Taint> = fc.record(
  {
    key: fc.constantFrom(...KEYS),
    value: fc.constantFrom(...VALUES),
    effect: fc.constantFrom(...EFFECTS),
    timeAdded: fc.integer({ min: 0, max: 2_000_000_000_000 }),
  },
  { requiredKeys: ['key', 'effect'] },
);

const tolerationArb: fc.Arbitrary<Toleration> = fc.record(
  {
    key: fc.constantFrom('', ...KEYS),
    operator: fc.constantFrom('', 'Equal', 'Exists', 'Lt', 'Gt', 'Bogus'),
    value: fc.constantFrom(...VALUES),
    effect: fc.constantFrom('', ...EFFECTS),
    tolerationSeconds: fc.integer({ min: -5, max: 1000 }),
  },
  { requiredKeys: [] },
);

/** Orders toleration times with 'forever' above every number. */
function asNumber(t: TolerationTimeMs): number {
  return t === FOREVER ? Number.POSITIVE_INFINITY : t;
}

describe('toleratesTaint (core/v1 Toleration.ToleratesTaint)', () => {
  test('empty key + Exists + no effect tolerates every taint', () => {
    fc.assert(fc.property(taintArb, fc.boolean(), (taint, gate) => toleratesTaint({ operator: 'Exists' }, taint, gate)));
  });

  test('a toleration with an effect never tolerates a taint with another effect', () => {
    fc.assert(
      fc.property(tolerationArb, taintArb, fc.boolean(), (tol, taint, gate) => {
        fc.pre(tol.effect !== undefined && tol.effect !== '' && tol.effect !== taint.effect);
        return !toleratesTaint(tol, taint, gate);
      }),
    );
  });

  test('a toleration with a key never tolerates a taint with another key', () => {
    fc.assert(
      fc.property(tolerationArb, taintArb, fc.boolean(), (tol, taint, gate) => {
        fc.pre(tol.key !== undefined && tol.key !== '' && tol.key !== taint.key);
        return !toleratesTaint(tol, taint, gate);
      }),
    );
  });

  test('once key and effect are compatible, the operator decides', () => {
    fc.assert(
      fc.property(tolerationArb, taintArb, fc.boolean(), (tol, taint, gate) => {
        const compatible = (!tol.effect || tol.effect === taint.effect) && (!tol.key || tol.key === taint.key);
        fc.pre(compatible);
        const got = toleratesTaint(tol, taint, gate);
        const op = tol.operator ?? '';
        if (op === '' || op === 'Equal') assert.equal(got, (tol.value ?? '') === (taint.value ?? ''));
        else if (op === 'Exists') assert.equal(got, true);
        else if (op === 'Bogus') assert.equal(got, false);
      }),
    );
  });

  test('TaintTolerationComparisonOperators on: Lt/Gt compare canonical int64 values (taint < toleration / taint > toleration); anything else never matches', () => {
    // Canonical as content.IsDecimalInteger: no '+', no leading zero, no '-0', no space.
    const isInt64 = (s: string): boolean => /^(0|-?[1-9]\d*)$/.test(s) && BigInt(s) < 2n ** 63n && BigInt(s) >= -(2n ** 63n);
    fc.assert(
      fc.property(fc.constantFrom(...VALUES), fc.constantFrom(...VALUES), fc.constantFrom('Lt', 'Gt'), (tolValue, taintValue, op) => {
        const got = toleratesTaint({ key: 'a', operator: op, value: tolValue }, { key: 'a', value: taintValue, effect: 'NoExecute' }, true);
        if (!isInt64(tolValue) || !isInt64(taintValue)) return !got;
        const want = op === 'Lt' ? BigInt(taintValue) < BigInt(tolValue) : BigInt(taintValue) > BigInt(tolValue);
        return got === want;
      }),
    );
  });

  test('TaintTolerationComparisonOperators off (the 1.37 default): an Lt/Gt toleration tolerates no taint', () => {
    fc.assert(
      fc.property(tolerationArb, taintArb, fc.constantFrom('Lt', 'Gt'), (tol, taint, op) => !toleratesTaint({ ...tol, operator: op }, taint, false)),
    );
  });

  test('tolerationSeconds plays no part in matching', () => {
    fc.assert(
      fc.property(tolerationArb, taintArb, fc.option(fc.integer({ min: -10, max: 10 }), { nil: undefined }), fc.boolean(), (tol, taint, secs, gate) => {
        const other: Toleration = { ...tol };
        if (secs === undefined) delete other.tolerationSeconds;
        else other.tolerationSeconds = secs;
        return toleratesTaint(tol, taint, gate) === toleratesTaint(other, taint, gate);
      }),
    );
  });

  test('absent and empty values are the same for Equal', () => {
    assert.equal(toleratesTaint({ key: 'a', operator: 'Equal' }, { key: 'a', effect: 'NoExecute' }, false), true);
    assert.equal(toleratesTaint({ key: 'a', value: '' }, { key: 'a', value: '', effect: 'NoExecute' }, false), true);
    assert.equal(toleratesTaint({ key: 'a', value: 'x' }, { key: 'a', effect: 'NoExecute' }, false), false);
  });
});

describe('getMatchingTolerations (helper.GetMatchingTolerations)', () => {
  test('allTolerated iff every taint has a tolerating toleration; used is the first match per taint', () => {
    fc.assert(
      fc.property(fc.array(taintArb, { maxLength: 5 }), fc.array(tolerationArb, { maxLength: 6 }), fc.boolean(), (taints, tolerations, gate) => {
        const { allTolerated, used } = getMatchingTolerations(taints, tolerations, gate);
        const every = taints.every((taint) => tolerations.some((t) => toleratesTaint(t, taint, gate)));
        assert.equal(allTolerated, every);
        if (!allTolerated) {
          assert.deepEqual(used, []);
          return;
        }
        assert.equal(used.length, taints.length);
        taints.forEach((taint, i) => {
          const first = tolerations.findIndex((t) => toleratesTaint(t, taint, gate));
          assert.equal(used[i], tolerations[first]);
        });
      }),
    );
  });

  test('no taints → (true, []); taints but no tolerations → (false, [])', () => {
    assert.deepEqual(getMatchingTolerations([], [{ operator: 'Exists' }], false), { allTolerated: true, used: [] });
    assert.deepEqual(getMatchingTolerations([{ key: 'a', effect: 'NoExecute' }], [], false), { allTolerated: false, used: [] });
  });

  test('a later toleration with a shorter tolerationSeconds for the same taint is ignored', () => {
    const taint: Taint = { key: 'a', effect: 'NoExecute' };
    const long: Toleration = { key: 'a', operator: 'Exists', tolerationSeconds: 100 };
    const short: Toleration = { key: 'a', operator: 'Exists', tolerationSeconds: 1 };
    const { used } = getMatchingTolerations([taint], [long, short], false);
    assert.deepEqual(used, [long]);
    assert.equal(getMinTolerationTimeMs(used), 100_000);
  });
});

describe('getMinTolerationTimeMs (taint_eviction.go getMinTolerationTime)', () => {
  test('result is one of the inputs and no larger than any (forever above all numbers)', () => {
    fc.assert(
      fc.property(fc.array(tolerationArb, { minLength: 1, maxLength: 6 }), (used) => {
        const min = getMinTolerationTimeMs(used);
        const times = used.map(tolerationTimeMs);
        assert.ok(times.includes(min));
        for (const t of times) assert.ok(asNumber(min) <= asNumber(t));
      }),
    );
  });

  test('order of the used tolerations does not matter', () => {
    fc.assert(
      fc.property(fc.array(tolerationArb, { maxLength: 6 }), fc.nat(), (used, seed) => {
        const rotated = used.length === 0 ? used : [...used.slice(seed % used.length), ...used.slice(0, seed % used.length)];
        return getMinTolerationTimeMs(rotated) === getMinTolerationTimeMs([...used].reverse()) && getMinTolerationTimeMs(used) === getMinTolerationTimeMs(rotated);
      }),
    );
  });

  test('adding a toleration to a non-empty used list never lengthens the minimum', () => {
    fc.assert(
      fc.property(fc.array(tolerationArb, { minLength: 1, maxLength: 5 }), tolerationArb, (used, extra) => {
        return asNumber(getMinTolerationTimeMs([...used, extra])) <= asNumber(getMinTolerationTimeMs(used));
      }),
    );
  });

  test('forever iff no used toleration sets tolerationSeconds; ≤ 0 seconds means 0 ms', () => {
    fc.assert(
      fc.property(fc.array(tolerationArb, { minLength: 1, maxLength: 5 }), (used) => {
        const min = getMinTolerationTimeMs(used);
        assert.equal(min === FOREVER, used.every((t) => t.tolerationSeconds === undefined));
        if (used.some((t) => t.tolerationSeconds !== undefined && t.tolerationSeconds <= 0)) assert.equal(min, 0);
      }),
    );
  });

  test('seconds become milliseconds', () => {
    assert.equal(tolerationTimeMs({ tolerationSeconds: 300 }), 300_000);
    assert.equal(tolerationTimeMs({ tolerationSeconds: -1 }), 0);
    assert.equal(tolerationTimeMs({}), FOREVER);
  });
});

describe('noExecuteTaints', () => {
  test('keeps exactly the NoExecute taints, in order', () => {
    fc.assert(
      fc.property(fc.array(taintArb, { maxLength: 8 }), (taints) => {
        const got = noExecuteTaints(taints);
        assert.ok(got.every((t) => t.effect === 'NoExecute'));
        // got is a subsequence of taints (same objects, same order) that skips no NoExecute taint.
        let i = 0;
        for (const t of taints) {
          if (got[i] === t) i++;
          else assert.notEqual(t.effect, 'NoExecute');
        }
        assert.equal(i, got.length);
      }),
    );
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", tolerations.ts). The controller
// skips a node update whose NoExecute taints are the same (controller.ts NodeUpdated): a list judged
// the same when a taint or its timeAdded changed would keep a stale schedule.
describe('sameNoExecuteTaints', () => {
  const t = (key: string, over: Partial<Taint> = {}): Taint => ({ key, effect: 'NoExecute', timeAdded: 1_000, ...over });

  test('the same taints in the same order are the same; the empty lists too', () => {
    assert.equal(sameNoExecuteTaints([t('a'), t('b', { value: 'v' })], [t('a'), t('b', { value: 'v' })]), true);
    assert.equal(sameNoExecuteTaints([], []), true);
  });

  test('an absent value equals the empty value', () => {
    assert.equal(sameNoExecuteTaints([t('a')], [t('a', { value: '' })]), true);
    assert.equal(sameNoExecuteTaints([t('a', { value: '' })], [t('a')]), true);
  });

  test('a different key, value, effect or timeAdded, order or length is a change', () => {
    assert.equal(sameNoExecuteTaints([t('a')], [t('b')]), false);
    assert.equal(sameNoExecuteTaints([t('a', { value: 'x' })], [t('a', { value: 'y' })]), false);
    assert.equal(sameNoExecuteTaints([t('a', { value: 'x' })], [t('a')]), false);
    assert.equal(sameNoExecuteTaints([t('a')], [t('a', { value: 'y' })]), false);
    assert.equal(sameNoExecuteTaints([t('a')], [t('a', { effect: 'NoSchedule' })]), false);
    assert.equal(sameNoExecuteTaints([t('a')], [t('a', { timeAdded: 2_000 })]), false);
    assert.equal(sameNoExecuteTaints([t('a'), t('b')], [t('b'), t('a')]), false);
    assert.equal(sameNoExecuteTaints([t('a'), t('b')], [t('a'), t('c')]), false, 'every taint must match, not just one');
    assert.equal(sameNoExecuteTaints([t('a')], [t('a'), t('b')]), false);
    assert.equal(sameNoExecuteTaints([t('a'), t('b')], [t('a')]), false);
  });
});

describe('compareNumericValues outside Lt and Gt', () => {
  test('any other operator never matches, whatever the numbers', () => {
    assert.equal(compareNumericValues('5', '1', 'Equal'), false);
    assert.equal(compareNumericValues('1', '5', 'Exists'), false);
    assert.equal(compareNumericValues('1', '5', ''), false);
  });
});
