/**
 * A generated cluster snapshot (healthy nodes spread over zones, ReplicaSet and DaemonSet pods with
 * the tolerations admission gives them, volumes on some nodes), for the what-if's unit tests and
 * its 5,000-node measurement (bench/what-if.ts).
 */
import type { Node, Pod, Toleration, VolumeAttachment } from '../kube/objects.js';
import { LABEL_TOPOLOGY_REGION, LABEL_TOPOLOGY_ZONE } from '../nodelifecycle/zones.js';
import type { ClusterSnapshot } from './snapshot.js';

/** Options of {@link syntheticSnapshot}. */
export interface SyntheticOptions {
  /** Zone names (label `topology.kubernetes.io/zone`; region `r`). */
  zones: readonly string[];
  nodesPerZone: number;
  /** ReplicaSet pods per node (owner `ReplicaSet/web-<n>`), with the DefaultTolerationSeconds 300 s tolerations. */
  podsPerNode: number;
  /** Also one DaemonSet pod per node (`DaemonSet/node-agent`, tolerating every NoExecute taint forever). */
  daemonSetPods?: boolean;
  /** Every `volumeEvery`-th node also runs a StatefulSet pod with a PVC whose PV is attached to it (0: none). */
  volumeEvery?: number;
  /** T+0, epoch ms (default 2026-11-24T12:00:00Z). */
  takenAt?: number;
}

/** Admission's DefaultTolerationSeconds tolerations (kube-apiserver plugin `DefaultTolerationSeconds`). */
const DEFAULT_TOLERATIONS: readonly Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

/**
 * Builds the snapshot. Node names are `<zone>-n<i>` (i from 0, zero-padded to the width of
 * `nodesPerZone - 1`), every node Ready with a Lease renewed 2 s before T+0.
 * @returns a snapshot whose `takenAt` is T+0.
 */
export function syntheticSnapshot(o: SyntheticOptions): ClusterSnapshot {
  const t0 = o.takenAt ?? Date.UTC(2026, 10, 24, 12);
  const s: ClusterSnapshot = { takenAt: t0, nodes: [], leases: [], pods: [], daemonSets: [], volumeAttachments: [], pvcs: [], pvs: [] };
  const width = String(Math.max(0, o.nodesPerZone - 1)).length;
  let uid = 0;
  const pod = (namespace: string, name: string, nodeName: string, extra: Partial<Pod>): Pod => ({
    namespace,
    name,
    uid: `pod-${++uid}`,
    resourceVersion: '1',
    nodeName,
    phase: 'Running',
    creationTimestamp: t0 - 3_600_000,
    conditions: [{ type: 'Ready', status: 'True' }],
    tolerations: DEFAULT_TOLERATIONS,
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
    ...extra,
  });
  if (o.daemonSetPods) s.daemonSets.push({ namespace: 'kube-system', name: 'node-agent', uid: 'ds-node-agent' });
  let podIndex = 0;
  for (const zone of o.zones) {
    for (let i = 0; i < o.nodesPerZone; i++) {
      const name = `${zone}-n${String(i).padStart(width, '0')}`;
      const node: Node = {
        name,
        uid: `node-${name}`,
        resourceVersion: '1',
        creationTimestamp: t0 - 86_400_000,
        labels: { [LABEL_TOPOLOGY_REGION]: 'r', [LABEL_TOPOLOGY_ZONE]: zone, 'kubernetes.io/hostname': name },
        unschedulable: false,
        taints: [],
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: t0 - 60_000, lastTransitionTime: t0 - 86_400_000 }],
      };
      s.nodes.push(node);
      s.leases.push({ namespace: 'kube-node-lease', name, resourceVersion: '1', holderIdentity: name, leaseDurationSeconds: 40, renewTime: t0 - 2000 });
      for (let p = 0; p < o.podsPerNode; p++) {
        const rs = `web-${podIndex % 50}`;
        s.pods.push(pod('default', `${rs}-${podIndex++}`, name, { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: `rs-${rs}`, controller: true }] }));
      }
      if (o.daemonSetPods) {
        s.pods.push(
          pod('kube-system', `node-agent-${name}`, name, {
            tolerations: [{ operator: 'Exists', effect: 'NoExecute' }, { operator: 'Exists', effect: 'NoSchedule' }],
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'node-agent', uid: 'ds-node-agent', controller: true }],
          }),
        );
      }
      if (o.volumeEvery && i % o.volumeEvery === 0) {
        const claim = `data-db-${name}`;
        const pv = `pv-${name}`;
        s.pods.push(
          pod('default', `db-${name}`, name, {
            pvcNames: [claim],
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'sts-db', controller: true }],
          }),
        );
        s.pvcs.push({ namespace: 'default', name: claim, uid: `pvc-${name}`, volumeName: pv });
        s.pvs.push({ name: pv, uid: `pvu-${name}`, claimRef: { namespace: 'default', name: claim } });
        const va: VolumeAttachment = { name: `va-${name}`, uid: `vau-${name}`, resourceVersion: '1', attacher: 'csi.example.com', nodeName: name, persistentVolumeName: pv, attached: true };
        s.volumeAttachments.push(va);
      }
    }
  }
  return s;
}
