/**
 * Fuzz campaign seed 20261201, run 29455: invariant (h), "nothing is done to or because of an object
 * the API holds malformed". Shrunk by the campaign's shrinker (`shrinkRun`; the DaemonSet pod-add on
 * a-n0 only makes index 39 pick fz-9):
 *   +0s pod-add on a-n0 (DaemonSet, tolerating everything, requiring zone a during execution)
 *   +0s pod-add fz-9 on a-n0 (tolerating forever, requiring zone b during execution)
 *   +0s the API holds fz-9 malformed for 61 s
 *   → (h) default/fz-9 evicted by node-affinity-enforcer at +60 s, malformed since +0 s.
 * No upstream controller acted: node-affinity-enforcer is ours (docs/node-affinity.md). A harness
 * cache-model error: the fuzz caches (test/fuzz/watch.ts) applied the `malformed` event to the shared
 * pods cache only, so the enforcer's own pod cache kept fz-9 and its 60 s grace ran out. In a real
 * process the enforcer's pods are a second Informer (src/nodeaffinity/informer.ts) through the same
 * src/kube/informercache.ts, which treats a pod its converter rejects as absent (a delete, then an add
 * when a readable version comes), so the enforcer forgets it and never evicts it while unreadable.
 * Fix: the fuzz caches now gate the enforcer's pod source as the shared one (`#wrapAffinityPods`). With
 * it, `toAffinityPod` (src/nodeaffinity/rule.ts) now rejects exactly what `toPod` rejects (it used to
 * accept a pod without a readable creationTimestamp, which every other cache drops), so "malformed"
 * means the same to both informers, as the model assumes. Replay: `runSequence(STEPS, config)`, or
 * `runSequence(runSteps(20261201, 29455), config)` (0 violations).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseControllerFlags } from '../../../src/cli/flags.js';
import { InMemoryCluster } from '../../../src/inmemory/cluster.js';
import type { Pod } from '../../../src/kube/objects.js';
import type { AffinityPod } from '../../../src/nodeaffinity/rule.js';
import { FakeClock } from '../../../src/util/clock.js';
import { FUZZ_FLAGS } from '../../fuzz/campaign.js';
import type { Step } from '../../fuzz/events.js';
import { runSequence } from '../../fuzz/harness.js';
import { ProcessCaches } from '../../fuzz/watch.js';
import { node, pod, T0 } from '../../support/outofservice-world.js';

const STEPS: Step[] = [{"afterS":0,"event":{"kind":"pod-add","node":0,"tol":{"kind":"everything"},"ds":true,"aff":0}},{"afterS":0,"event":{"kind":"pod-add","node":0,"tol":{"kind":"forever"},"aff":1}},{"afterS":0,"event":{"kind":"malformed","resource":"pods","index":39,"forS":61}}];

test('fuzz run 29455 of seed 20261201: a pod held malformed is not evicted for node affinity', async () => {
  const config = await parseControllerFlags([...FUZZ_FLAGS], {});
  const r = await runSequence(STEPS, config);
  assert.deepEqual(r.violations, [], r.text);
  // Not forever: fz-9 comes back readable at +61 s, its rule still fails (zone b on a zone-a node),
  // and it is evicted a whole grace later (the DaemonSet pod matches and is never evicted).
  assert.equal(r.outcomes.affinityEvictions, 1, r.text);
});

test('the fuzz caches: a malformed pod leaves the enforcer\'s pod cache (a delete) and comes back when readable (an add)', () => {
  const clock = new FakeClock(T0);
  const cluster = InMemoryCluster.empty(clock);
  cluster.putNode(node('n1', 'True'));
  cluster.putPod(pod('p', 'n1'));
  const caches = new ProcessCaches(cluster, clock, [], (): AffinityPod['rule'] => ({ kind: 'none' }));
  const pods = caches.sources.affinityPods;
  assert.ok(pods);
  const seen: string[] = [];
  pods.subscribe({ add: (p) => seen.push(`add ${p.name}`), update: (_, p) => seen.push(`update ${p.name}`), delete: (p) => seen.push(`delete ${p.name}`) });
  const key = `${(cluster.podList()[0] as Pod).namespace}/p`;
  assert.equal(pods.get(key)?.name, 'p');
  assert.ok(caches.malform('pods', key));
  assert.deepEqual(seen, ['delete p']);
  assert.equal(pods.get(key), undefined);
  assert.deepEqual(pods.list(), []);
  assert.deepEqual(pods.onNode('n1'), []);
  // While malformed, its changes are not delivered to the enforcer either.
  cluster.putPod({ ...(cluster.pods.get(key) as Pod), phase: 'Running' });
  assert.deepEqual(seen, ['delete p']);
  caches.unmalform('pods', key);
  assert.deepEqual(seen, ['delete p', 'add p']);
  assert.equal(pods.get(key)?.name, 'p');
  // A process that starts while the pod is malformed never lists it.
  caches.malform('pods', key);
  const later = new ProcessCaches(cluster, clock, [`pods:${key}`], (): AffinityPod['rule'] => ({ kind: 'none' }));
  assert.deepEqual(later.sources.affinityPods?.list(), []);
});
