/**
 * The fuzz harness's wire (test/fuzz/wire.ts, issue 57's wire vocabulary and invariant (n)): the
 * mirror that hands a run's Nodes, Pods and Leases to the caches through the protobuf path
 * (@bufbuild/protobuf encode → the project's decoder) or the JSON path (upstream's gogo rules →
 * JSON → the converters). Pins that neither path drops or changes an object: every object comes out
 * of both alike and as the cluster holds it (times in whole seconds), bytes that are not UTF-8 come
 * out as Go renders them, and a truncated object reaches the caches keyed and unreadable, then
 * readable again; and that (n) flags the first decision the two paths disagree on.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseControllerFlags } from '../../src/cli/flags.js';
import { InMemoryCluster } from '../../src/inmemory/cluster.js';
import { podKey, type Lease, type Node, type Pod } from '../../src/kube/objects.js';
import { FakeClock } from '../../src/util/clock.js';
import { syntheticSnapshot } from '../../src/whatif/synthetic.js';
import { runSequence, wireViolation } from '../fuzz/harness.js';
import { WIRE_BAD_BYTES, WIRE_RESOURCES, WireMirror, goRendered, truncateLastField, type WireMode, type WireResource } from '../fuzz/wire.js';
import { FUZZ_FLAGS } from '../fuzz/campaign.js';

const T0 = Date.UTC(2026, 2, 1, 12);
const ZONE = 'topology.kubernetes.io/zone';

/** A small cluster (2 zones × 2 nodes, a pod each) and a mirror of each mode, with their hook calls. */
function world(): { cluster: InMemoryCluster; raws: Map<string, Uint8Array>; mirrors: Record<WireMode, WireMirror>; calls: Record<WireMode, string[]> } {
  const clock = new FakeClock(T0 + 123); // not a whole second: the wire drops the milliseconds of a metav1.Time
  const cluster = new InMemoryCluster(syntheticSnapshot({ zones: ['a', 'b'], nodesPerZone: 2, podsPerNode: 1, takenAt: T0 + 123 }), clock, { graceMs: 40_000 });
  const raws = new Map<string, Uint8Array>();
  const calls: Record<WireMode, string[]> = { json: [], protobuf: [] };
  const mirror = (mode: WireMode): WireMirror =>
    new WireMirror(cluster, mode, raws, { unreadable: (r, k) => calls[mode].push(`unreadable ${r} ${k}`), readable: (r, k) => calls[mode].push(`readable ${r} ${k}`) });
  return { cluster, raws, mirrors: { protobuf: mirror('protobuf'), json: mirror('json') }, calls };
}

/** `o` as the wire gives it: every epoch-ms time of a metav1.Time in whole seconds (a Lease's MicroTimes keep their milliseconds). */
function wholeSeconds<T extends Node | Pod | Lease>(resource: WireResource, o: T): T {
  if (resource === 'leases') return o;
  const s = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : Math.floor(ms / 1000) * 1000);
  const strip = <C extends object>(c: C): C => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, /Time(stamp)?$|timeAdded/.test(k) && typeof v === 'number' ? s(v) : v])) as C;
  const out = strip(o as unknown as Record<string, unknown>) as unknown as T;
  if ('taints' in out) return { ...out, taints: out.taints.map(strip), conditions: out.conditions.map(strip) };
  if ('conditions' in out) return { ...out, conditions: out.conditions.map(strip) };
  return out;
}

describe('fuzz wire (test/fuzz/wire.ts)', () => {
  test('every Node, Pod and Lease comes out of both paths alike and as the cluster holds it', () => {
    const { cluster, mirrors } = world();
    for (const r of WIRE_RESOURCES) {
      const all = r === 'nodes' ? cluster.nodeList() : r === 'pods' ? cluster.podList() : [...cluster.leases.values()];
      assert.ok(all.length >= 4, r);
      for (const o of all) {
        const key = r === 'nodes' ? (o as Node).name : podKey(o as Pod | Lease);
        const got = (m: WireMirror): unknown => (r === 'nodes' ? m.nodes.get(key) : r === 'pods' ? m.pods.get(key) : m.leases.get(key));
        assert.deepEqual(got(mirrors.protobuf), got(mirrors.json), `${r} ${key}`);
        // Fields the fuzz pods do not set come out as the converter writes them (an empty list, no running container known).
        const want = r === 'pods' ? { ...wholeSeconds(r, o), ephemeralClaimNames: [], inlineVolumeDrivers: [], containersNotRunning: (o as Pod).containersNotRunning === true } : wholeSeconds(r, o);
        assert.deepEqual(got(mirrors.protobuf), want, `${r} ${key}`);
      }
    }
  });

  test('a change reaches the handlers through both paths, bytes that are not UTF-8 as Go renders them', async () => {
    const { cluster, raws, mirrors } = world();
    const seen: Record<WireMode, string[]> = { json: [], protobuf: [] };
    for (const mode of ['json', 'protobuf'] as const) mirrors[mode].on('nodes', { update: (_o, n) => seen[mode].push(n.labels[ZONE] ?? '') });
    // The first two sequences read alike by Go's rule: the two nodes share one zone on both paths.
    const zones = [0, 1].map((i) => {
      const raw = Uint8Array.from([...Buffer.from('a'), ...WIRE_BAD_BYTES[i]!]);
      raws.set(goRendered(raw), raw);
      return goRendered(raw);
    });
    assert.equal(zones[0], zones[1]);
    assert.equal(zones[0], 'a\uFFFD\uFFFDA\uFFFD\uFFFD\uFFFD\uFFFD');
    for (const n of cluster.nodeList().slice(0, 2)) cluster.putNode({ ...n, labels: { ...n.labels, [ZONE]: zones[0]! } });
    await Promise.resolve();
    assert.deepEqual(seen.protobuf, [zones[0], zones[0]]);
    assert.deepEqual(seen.json, seen.protobuf);
    assert.equal(mirrors.protobuf.counts.delivered, 2);
  });

  test('a truncated object of each resource reaches the caches keyed and unreadable on both paths, then readable', () => {
    const { cluster, mirrors, calls } = world();
    const keys: Record<WireResource, string> = { nodes: cluster.nodeList()[0]!.name, pods: podKey(cluster.podList()[0]!), leases: [...cluster.leases.keys()][0]! };
    for (const mode of ['protobuf', 'json'] as const) {
      const m = mirrors[mode];
      for (const r of WIRE_RESOURCES) assert.equal(m.truncate(r, keys[r], 5), true, `${mode} ${r}`);
      assert.deepEqual(calls[mode], WIRE_RESOURCES.map((r) => `unreadable ${r} ${keys[r]}`), mode);
      assert.deepEqual(m.unreadableIds().sort(), WIRE_RESOURCES.map((r) => `${r}:${keys[r]}`).sort());
      // The mirror keeps the last readable version (a Node or Lease cache keeps it; the process's cache hides a Pod).
      assert.ok(m.nodes.get(keys.nodes) && m.pods.get(keys.pods) && m.leases.get(keys.leases));
      for (const r of WIRE_RESOURCES) m.untruncate(r, keys[r]);
      assert.deepEqual(calls[mode].slice(3), WIRE_RESOURCES.map((r) => `readable ${r} ${keys[r]}`), mode);
      assert.deepEqual(m.unreadableIds(), []);
    }
  });

  test('truncateLastField cuts inside the last field only', () => {
    const bytes = Uint8Array.of(0x0a, 0x02, 0x61, 0x62, 0x12, 0x03, 0x01, 0x02, 0x03);
    for (let cut = 1; cut <= 10; cut++) {
      const t = truncateLastField(bytes, cut)!;
      assert.ok(t.length >= 5 && t.length < bytes.length, `cut ${cut}: ${t.length}`);
    }
    // Down to the tag alone (its length missing); an empty message has nothing to cut.
    assert.deepEqual(truncateLastField(Uint8Array.of(0x0a, 0x00), 9), Uint8Array.of(0x0a));
    assert.equal(truncateLastField(new Uint8Array(0), 1), undefined);
  });

  test('(n) names the first decision the two paths disagree on, and nothing when they agree', () => {
    const a = ['+1.000s {"kind":"taint"}', '+2.000s {"kind":"pod-deleted"}'];
    assert.equal(wireViolation(a, [...a]), undefined);
    const v = wireViolation(a, [a[0]!, '+2.500s {"kind":"pod-deleted"}']);
    assert.equal(v?.invariant, 'n');
    assert.equal(v?.atMs, 2000);
    assert.match(v?.detail ?? '', /the first 1 alike.*decision #2 through protobuf: \+2\.000s.*through JSON: \+2\.500s/);
    assert.match(wireViolation(a, a.slice(0, 1))?.detail ?? '', /decision #2 .*through JSON: \(none\)/);
  });

  test('a run with a truncated node whose kubelet stops: both paths hold the taint until the node can be read, and agree', async () => {
    const config = await parseControllerFlags([...FUZZ_FLAGS], {});
    const r = await runSequence(
      [
        { afterS: 1, event: { kind: 'wire-truncated', resource: 'nodes', index: 0, forS: 90, cut: 3 } },
        { afterS: 0, event: { kind: 'kubelet-stop', node: 0 } },
        { afterS: 2, event: { kind: 'wire-bytes', node: 5, zone: 2, bad: 0 } },
      ],
      config,
    );
    assert.deepEqual(r.violations, [], r.text);
    assert.equal(r.coverage['wire-truncated:node'], 1);
    assert.equal(r.coverage['wire-bytes:zone'], 1);
    assert.ok(r.outcomes.noExecuteTaints >= 1, r.text);
  });
});
