/**
 * SETTLED (a simulator artefact): run #94103 of seed 20261201 (the 100,000-run campaign), invariant
 * (d) "nothing lost", shrunk by fast-check (`shrinkRun`) to:
 *   +11s restart; +22s kubelet-stop a-n0; +81s lease-pause b-n1 for 65 s; +146s kubelet-stop b-n1
 *   → (d) default/fz-5 on b-n1 (kubelet stopped since +146 s, tolerating 60 s) not deleted by +371 s.
 * At +146 s b-n1's pause ended on the very millisecond of its kubelet's regular tick, and the
 * simulated kubelet renewed its Lease twice: two resourceVersions of one renewTime. The restart at
 * +11 s put ours' 5 s monitor passes on +146 s, between the two writes, so the pass saved the first
 * version for good: as upstream's `tryUpdateNodeHealth`, which replaces the saved Lease only when
 * renewTime grows (`savedLease.Spec.RenewTime.Before(observedLease.Spec.RenewTime)`). Every live read
 * of the Lease circuit breaker then answered the second version, b-n1 was never marked Unknown, and
 * fz-5 never deleted; upstream with a pass at that instant would hold it the same way (pinned in
 * test/unit/nodelifecycle-controller.test.ts, "a Lease changed without a renewal … keeps its node
 * from being marked, as upstream"). A real kubelet renews from one loop with its clock's MicroTime and
 * never writes one renewTime twice. Fixed in the simulator (src/inmemory/cluster.ts `#renewLease`:
 * no second renewal in the same instant). No controller change. Since then the kubelets of
 * lease-written-twice.test.ts (run #1043 of seed 20261130) renew once too; the controller fix that
 * test pinned stays pinned by test/unit/nodelifecycle-controller.test.ts ("a second version of a
 * renewal (same renewTime) written before the next monitor pass …").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import { InMemoryCluster } from '../../../src/inmemory/cluster.js';
import { FakeClock } from '../../../src/util/clock.js';
import { syntheticSnapshot } from '../../../src/whatif/synthetic.js';
import type { Step } from '../../fuzz/events.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import { runSequence } from '../../fuzz/harness.js';

const STEPS: Step[] = [{"afterS":11,"event":{"kind":"restart"}},{"afterS":11,"event":{"kind":"kubelet-stop","node":0}},{"afterS":59,"event":{"kind":"lease-pause","node":5,"forS":65}},{"afterS":65,"event":{"kind":"kubelet-stop","node":5}}];
/** Run #94103 of seed 20261201 as generated (`runSteps(20261201, 94103)`), kept as data: the vocabulary may change. */
const RUN_94103: Step[] = [{"afterS":11,"event":{"kind":"restart"}},{"afterS":21,"event":{"kind":"kubelet-stop","node":0}},{"afterS":59,"event":{"kind":"lease-pause","node":5,"forS":65}},{"afterS":72,"event":{"kind":"kubelet-stop","node":5}},{"afterS":35,"event":{"kind":"kubelet-start","node":1}},{"afterS":43,"event":{"kind":"tolerations-edit","pod":38,"tol":{"kind":"none"}}},{"afterS":40,"event":{"kind":"pod-add","node":6,"tol":{"kind":"none"},"aff":0}},{"afterS":45,"event":{"kind":"report-ready","node":0}},{"afterS":27,"event":{"kind":"clock-step","offsetMs":-475}},{"afterS":42,"event":{"kind":"kubelet-stop","node":2}},{"afterS":87,"event":{"kind":"kubelet-stop","node":5}},{"afterS":60,"event":{"kind":"zone-change","node":2,"zone":0}},{"afterS":64,"event":{"kind":"oos-remove","node":2}},{"afterS":12,"event":{"kind":"watch-drop","resource":"pods","forS":2,"gone":true}}];

test('a node whose Lease pause ends as its kubelet stops is still marked and its pod deleted (run #94103, shrunk)', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
  assert.equal(r.outcomes.deletions, 2, `fz-0 and fz-5 deleted:\n${r.text}`);
});

test('run #94103 of seed 20261201 as generated passes', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(RUN_94103, config);
  assert.deepEqual(r.violations, [], r.text);
});

test('a simulated kubelet whose pause ends on its own tick renews its Lease once', async () => {
  const t0 = Date.UTC(2026, 10, 27, 12);
  const clock = new FakeClock(t0);
  const cluster = new InMemoryCluster(syntheticSnapshot({ zones: ['a'], nodesPerZone: 6, podsPerNode: 0, takenAt: t0 }), clock, { graceMs: 50_000 });
  const node = cluster.nodeList().map((n) => n.name).sort()[5] ?? '';
  const writes: number[] = [];
  cluster.on('leases', { add: () => undefined, update: (_o, l) => (l.name === node ? writes.push(clock.now() - t0) : undefined), delete: () => undefined });
  cluster.startKubelets();
  await clock.advanceAsync(81_000);
  // The sixth kubelet renews at +6 s, +16 s, … +146 s: the pause ends on a tick.
  cluster.apply('pause-heartbeats', [node], 65_000);
  await clock.advanceAsync(76_000);
  assert.deepEqual(writes.filter((ms) => ms === 146_000), [146_000], `renewals: ${writes.join(', ')}`);
  assert.ok(writes.includes(156_000), `it renews on its next tick: ${writes.join(", ")}`);
});
