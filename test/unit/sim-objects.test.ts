import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  POD_KINDS,
  assertDnsLabel,
  assignPodKinds,
  buildLease,
  buildNode,
  buildPod,
  buildVolumeAttachment,
  csiAttachmentName,
  daemonSetTolerations,
  defaultZoneNames,
  initialConditions,
  nodeIp,
  nodePodCidr,
  pressureCondition,
  readyCondition,
  shutdownPodStatusPatch,
  simVolumeFor,
  type PodKind,
} from '@node-lifecycle-controller/sim/objects';

describe('pod mix assignment', () => {
  test('equal weights give every node one pod of each kind', () => {
    const kinds = assignPodKinds({ plain: 1, tolerationSeconds: 1, tolerateForever: 1, daemonSet: 1, pvc: 1 }, 15);
    for (let node = 0; node < 3; node++) {
      assert.deepEqual(new Set(kinds.slice(node * 5, node * 5 + 5)), new Set(POD_KINDS));
    }
  });

  test('property: each kind gets its weighted share within one pod, at every prefix', () => {
    const weight = fc.integer({ min: 0, max: 5 });
    fc.assert(
      fc.property(
        fc.record({ plain: weight, tolerationSeconds: weight, tolerateForever: weight, daemonSet: weight, pvc: weight }),
        fc.integer({ min: 1, max: 200 }),
        (weights, count) => {
          fc.pre(Object.values(weights).some((w) => w > 0));
          const total = Object.values(weights).reduce((a, b) => a + b, 0);
          const kinds = assignPodKinds(weights, count);
          assert.equal(kinds.length, count);
          for (const k of POD_KINDS) {
            const got = kinds.filter((x) => x === k).length;
            assert.ok(Math.abs(got - (count * weights[k]) / total) < 1 + 1e-9, `${k}: ${got} of ${count}`);
          }
          assert.deepEqual(assignPodKinds(weights, count), kinds, 'deterministic');
        },
      ),
    );
  });

  test('rejects negative weights and an all-zero mix when pods are wanted', () => {
    assert.throws(() => assignPodKinds({ plain: -1 }, 1), RangeError);
    assert.throws(() => assignPodKinds({}, 3), RangeError);
    assert.deepEqual(assignPodKinds({}, 0), []);
  });
});

describe('names', () => {
  test('CSI attachment name is csi- plus sha256 of handle, driver and node concatenated', () => {
    const expected = `csi-${createHash('sha256').update('vol-1' + 'sim.csi.nlc.dev' + 'node-a').digest('hex')}`;
    assert.equal(csiAttachmentName('vol-1', 'sim.csi.nlc.dev', 'node-a'), expected);
    assert.notEqual(csiAttachmentName('vol-1', 'd', 'n1'), csiAttachmentName('vol-1', 'd', 'n2'));
  });

  test('default zone names are DNS labels and unique', () => {
    const zones = defaultZoneNames(40);
    assert.equal(zones[0], 'zone-a');
    assert.equal(new Set(zones).size, 40);
    for (const z of zones) assertDnsLabel('zone', z);
    assert.throws(() => defaultZoneNames(0), RangeError);
  });

  test('assertDnsLabel rejects uppercase, underscores, edges and length', () => {
    for (const bad of ['Abc', 'a_b', '-a', 'a-', '', 'x'.repeat(64)]) assert.throws(() => assertDnsLabel('x', bad), RangeError, bad);
    assertDnsLabel('x', 'a-1');
  });

  test('property: node IPs and pod CIDRs are unique across 16k nodes', () => {
    const ips = new Set<string>();
    const cidrs = new Set<string>();
    for (let i = 0; i < 16_384; i++) {
      ips.add(nodeIp(i));
      cidrs.add(nodePodCidr(i));
    }
    assert.equal(ips.size, 16_384);
    assert.equal(cidrs.size, 16_384);
  });
});

describe('kubelet conditions and node', () => {
  test('pressure conditions use the kubelet reasons for both states', () => {
    assert.equal(pressureCondition('MemoryPressure', true, 0).reason, 'KubeletHasInsufficientMemory');
    assert.equal(pressureCondition('MemoryPressure', false, 0).reason, 'KubeletHasSufficientMemory');
    assert.equal(pressureCondition('DiskPressure', true, 0).reason, 'KubeletHasDiskPressure');
    assert.equal(pressureCondition('PIDPressure', false, 0).reason, 'KubeletHasSufficientPID');
    assert.equal(pressureCondition('NetworkUnavailable', true, 0).status, 'True');
    const shutting = readyCondition(false, 0);
    assert.deepEqual([shutting.status, shutting.reason, shutting.message], ['False', 'KubeletNotReady', 'node is shutting down']);
  });

  test('a built node carries zone/region twins, hostname, os/arch and a full status', () => {
    const node = buildNode(
      { prefix: 'p', name: 'p-zone-a-0', zone: 'zone-a', region: 'r1', index: 0, conditions: initialConditions(5000), volumes: ['v1'] },
      5000,
    );
    const labels = node.metadata?.labels ?? {};
    assert.equal(labels['topology.kubernetes.io/zone'], 'zone-a');
    assert.equal(labels['failure-domain.beta.kubernetes.io/zone'], 'zone-a');
    assert.equal(labels['topology.kubernetes.io/region'], 'r1');
    assert.equal(labels['failure-domain.beta.kubernetes.io/region'], 'r1');
    assert.equal(labels['kubernetes.io/hostname'], 'p-zone-a-0');
    assert.equal(labels['nlc.sim/fleet'], 'p');
    assert.deepEqual(
      node.status?.conditions?.map((c) => [c.type, c.status]),
      [
        ['Ready', 'True'],
        ['MemoryPressure', 'False'],
        ['DiskPressure', 'False'],
        ['PIDPressure', 'False'],
        ['NetworkUnavailable', 'False'],
      ],
    );
    assert.equal(node.status?.conditions?.[0]?.lastHeartbeatTime?.getTime(), 5000);
    assert.deepEqual(node.status?.volumesInUse, ['v1']);
    assert.ok(node.status?.capacity?.['cpu'] && node.status.allocatable?.['memory'] && node.status.nodeInfo?.kubeletVersion);
  });

  test('a lease names its node as holder, is owned by it and renews in MicroTime', () => {
    const lease = buildLease('p', 'n1', 'uid-1', 40, Date.UTC(2026, 0, 1, 0, 0, 0, 123));
    assert.equal(lease.metadata?.namespace, 'kube-node-lease');
    assert.equal(lease.spec?.holderIdentity, 'n1');
    assert.equal(lease.metadata?.ownerReferences?.[0]?.uid, 'uid-1');
    assert.equal(JSON.parse(JSON.stringify(lease.spec?.renewTime)), '2026-01-01T00:00:00.123000Z');
  });
});

describe('pods', () => {
  const pod = (kind: PodKind) =>
    buildPod({
      prefix: 'p',
      namespace: 'ns',
      name: `x-${kind}`,
      nodeName: 'n1',
      kind,
      tolerationSeconds: 42,
      ...(kind === 'daemonSet' ? { daemonSet: { name: 'p-ds-0', uid: 'ds-uid' } } : {}),
      ...(kind === 'pvc' ? { pvcName: 'data-x' } : {}),
    });

  test('plain pods carry no tolerations, so admission adds its defaults', () => {
    assert.equal(pod('plain').spec?.tolerations, undefined);
    assert.equal(pod('plain').spec?.nodeName, 'n1');
    assert.equal(pod('plain').spec?.automountServiceAccountToken, false);
  });

  test('explicit and forever tolerations cover not-ready and unreachable NoExecute', () => {
    const explicit = pod('tolerationSeconds').spec?.tolerations ?? [];
    assert.deepEqual(
      explicit.map((t) => [t.key, t.effect, t.tolerationSeconds]),
      [
        ['node.kubernetes.io/not-ready', 'NoExecute', 42],
        ['node.kubernetes.io/unreachable', 'NoExecute', 42],
      ],
    );
    for (const t of pod('tolerateForever').spec?.tolerations ?? []) assert.equal(t.tolerationSeconds, undefined);
  });

  test('DaemonSet pods are owned by their DaemonSet and carry its default tolerations', () => {
    const ds = pod('daemonSet');
    assert.deepEqual(ds.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]), [['DaemonSet', 'p-ds-0', 'ds-uid', true]]);
    assert.deepEqual(ds.spec?.tolerations, daemonSetTolerations());
    const keys = daemonSetTolerations().map((t) => `${t.key}:${t.effect}`);
    assert.deepEqual(keys, [
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule',
      'node.kubernetes.io/unschedulable:NoSchedule',
    ]);
    assert.ok(daemonSetTolerations().every((t) => t.tolerationSeconds === undefined));
  });

  test('PVC pods mount their claim; the VolumeAttachment points at the PV and node', () => {
    assert.equal(pod('pvc').spec?.volumes?.[0]?.persistentVolumeClaim?.claimName, 'data-x');
    const vol = simVolumeFor('x-pvc', 'n1', 'drv.example');
    const va = buildVolumeAttachment('p', vol, 'drv.example', 'n1');
    assert.equal(va.metadata?.name, csiAttachmentName(vol.volumeHandle, 'drv.example', 'n1'));
    assert.deepEqual([va.spec.attacher, va.spec.nodeName, va.spec.source.persistentVolumeName], ['drv.example', 'n1', vol.pvName]);
    assert.equal(vol.uniqueName, `kubernetes.io/csi/drv.example^${vol.volumeHandle}`);
  });

  test('shutdown status is Failed with the kubelet shutdown reason and message', () => {
    const status = (shutdownPodStatusPatch(0) as { status: Record<string, unknown> }).status;
    assert.equal(status['phase'], 'Failed');
    assert.equal(status['reason'], 'Terminated');
    assert.equal(status['message'], 'Pod was terminated in response to imminent node shutdown.');
  });
});
