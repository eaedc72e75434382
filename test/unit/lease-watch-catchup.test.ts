/**
 * The Lease circuit breaker's live read feeds the Lease cache's stall check
 * (src/nodelifecycle/descriptor.ts `leaseCircuitBreakerIO` → src/kube/informer.ts
 * `expectResourceVersion`), and that check restarts only a watch, never changes a verdict.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { leaseCircuitBreakerIO } from '../../src/nodelifecycle/descriptor.js';
import { liveLeaseVerdict } from '../../src/nodelifecycle/leasecircuitbreaker.js';
import type { ControllerSources } from '../../src/controllers/context.js';

function leasesSource(rv: string, expected: string[] | undefined): ControllerSources['leases'] {
  return {
    get: () => undefined,
    list: () => [],
    subscribe: () => undefined,
    hasSynced: () => true,
    isWatching: () => true,
    blindForMs: () => 0,
    resourceVersion: () => rv,
    ...(expected ? { expectResourceVersion: (v: string) => void expected.push(v) } : {}),
  };
}

test('each live Lease read hands its resourceVersion to the cache; a 404 hands nothing', async () => {
  const expected: string[] = [];
  const io = leaseCircuitBreakerIO(async (n) => (n === 'gone' ? undefined : { resourceVersion: n === 'a' ? '120' : '130' }), leasesSource('100', expected));
  assert.deepEqual(await io.readLease('a'), { resourceVersion: '120' });
  assert.equal(await io.readLease('gone'), undefined);
  assert.deepEqual(await io.readLease('b'), { resourceVersion: '130' });
  assert.deepEqual(expected, ['120', '130']);
  assert.equal(io.cacheResourceVersion(), '100');
});

test('the verdicts are the same with and without the stall check: a newer live Lease still holds', async () => {
  for (const expected of [[], undefined]) {
    const io = leaseCircuitBreakerIO(async () => ({ resourceVersion: '120' }), leasesSource('100', expected));
    const live = await io.readLease('a');
    assert.deepEqual(liveLeaseVerdict('100', live), { act: false, liveResourceVersion: '120' }, 'the cache is behind: hold, never act');
    assert.deepEqual(liveLeaseVerdict('120', live), { act: true });
  }
});

test('a failed live read still throws (the node is skipped: fail closed) and expects nothing', async () => {
  const expected: string[] = [];
  const io = leaseCircuitBreakerIO(async () => {
    throw new Error('connection reset');
  }, leasesSource('100', expected));
  await assert.rejects(io.readLease('a'), /connection reset/);
  assert.deepEqual(expected, []);
});
