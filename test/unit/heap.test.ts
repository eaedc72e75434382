import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MinHeap } from '../../src/util/heap.js';

interface Item {
  key: string;
  at: number;
  seq: number;
}
const less = (a: Item, b: Item): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);
const byOrder = (a: Item, b: Item): number => (less(a, b) ? -1 : less(b, a) ? 1 : 0);

describe('MinHeap', () => {
  test('pops in order; ties by the sequence tie-break', () => {
    const h = new MinHeap<Item>(less);
    const items = [5, 1, 3, 1, 4].map((at, seq) => ({ key: `k${seq}`, at, seq }));
    for (const it of items) h.push(it);
    const out: string[] = [];
    for (let it = h.pop(); it !== undefined; it = h.pop()) out.push(it.key);
    assert.deepEqual(out, ['k1', 'k3', 'k2', 'k4', 'k0']);
    assert.equal(h.pop(), undefined);
  });

  test('without keyOf the key operations throw', () => {
    const h = new MinHeap<Item>(less);
    assert.throws(() => h.has('a'), /without keyOf/);
    assert.throws(() => h.removeByKey('a'), /without keyOf/);
  });

  test('keyed: a duplicate key throws and leaves the heap unchanged', () => {
    const h = new MinHeap<Item>(less, { keyOf: (i) => i.key });
    h.push({ key: 'a', at: 1, seq: 0 });
    assert.throws(() => h.push({ key: 'a', at: 0, seq: 1 }), /duplicate key a/);
    assert.equal(h.size, 1);
    assert.equal(h.peek()?.at, 1);
  });

  test('keyed: random push / pop / removeByKey / rebuild agree with a sorted model', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), key: fc.integer({ min: 0, max: 15 }), at: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('pop' as const) }),
      fc.record({ kind: fc.constant('remove' as const), key: fc.integer({ min: 0, max: 15 }) }),
      fc.record({ kind: fc.constant('rebuild' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const h = new MinHeap<Item>(less, { keyOf: (i) => i.key });
        let model: Item[] = [];
        let seq = 0;
        for (const o of ops) {
          if (o.kind === 'push') {
            const key = `k${o.key}`;
            if (model.some((m) => m.key === key)) continue;
            const it = { key, at: o.at, seq: seq++ };
            h.push(it);
            model.push(it);
          } else if (o.kind === 'pop') {
            model.sort(byOrder);
            assert.equal(h.pop(), model.shift());
          } else if (o.kind === 'remove') {
            const key = `k${o.key}`;
            const want = model.find((m) => m.key === key);
            assert.equal(h.removeByKey(key), want);
            model = model.filter((m) => m.key !== key);
          } else {
            h.rebuild(h.toArray().reverse());
          }
          assert.equal(h.size, model.length);
          for (const m of model) assert.equal(h.getByKey(m.key), m);
          assert.equal(h.peek(), [...model].sort(byOrder)[0]);
        }
      }),
    );
  });
});
