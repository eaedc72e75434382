/**
 * Issue 53's zone, shared by test/integration/wire-zone.test.ts (ours alone, every lane) and
 * test/integration/wire-zone-upstream.test.ts (kube-controller-manager 1.37.2 beside ours): 5 nodes
 * in one zone, the first carrying a node-problem-detector style condition (`KernelDeadlock=False`)
 * whose message holds bytes that are not UTF-8, written in protobuf as a Go client writes them.
 */
import { create } from '@bufbuild/protobuf';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import { getRaw, type KubeClients } from '../../src/kube/client.js';
import { NODE_LEASE_NAMESPACE } from '../../src/kube/informerfactory.js';
import { toMicroTime } from '../../src/kube/objects.js';
import { NodeConditionSchema, NodeSchema } from '../../src/kube/protobuf/gen/k8s.io/api/core/v1/generated_pb.js';
import { putProtobuf, rawString, readProtobuf, type RawString } from './protobuf-writes.js';

/** `--node-monitor-grace-period` of both controllers, ms (the fleet's Leases last 4 s and are renewed every 1 s). */
export const WIRE_ZONE_GRACE_MS = 4000;

/** The message's bytes: ASCII, then C3 28 (a bad continuation), E2 82 41 (a truncated sequence) and FF. */
export const WIRE_ZONE_MESSAGE_BYTES: readonly number[] = [...Buffer.from('task blocked '), 0xc3, 0x28, 0xe2, 0x82, 0x41, 0xff];

/**
 * The zone's fleet (not started): one zone of 5 nodes, no pods, Leases renewed every 1 s for 4 s.
 * Status by Lease only: a kubelet status patch is applied to the object's JSON, which would turn the
 * raw bytes into U+FFFD.
 */
export function wireZoneFleet(clients: KubeClients, prefix: string): Fleet {
  return new Fleet({
    clients,
    prefix,
    namespace: prefix,
    zones: 1,
    nodesPerZone: 5,
    podsPerNode: 0,
    leaseRenewIntervalMs: 1000,
    leaseDurationSeconds: 4,
    nodeStatusUpdateFrequencyMs: 600_000,
  });
}

/**
 * Adds `KernelDeadlock=False` (reason `KernelHasNoDeadlock`) with {@link WIRE_ZONE_MESSAGE_BYTES} as
 * its message to `node`'s status, by a protobuf read and PUT of `nodes/status` (so the bytes are
 * stored as they are).
 * @returns the raw string written (its `bytes` are the message's).
 * @throws {Error} when the PUT is not answered 200.
 */
export async function putKernelDeadlockCondition(clients: KubeClients, node: string): Promise<RawString> {
  const kc = clients.kubeConfig;
  const raw = rawString(WIRE_ZONE_MESSAGE_BYTES);
  const n = await readProtobuf(kc, `/api/v1/nodes/${node}`, NodeSchema);
  const now = { seconds: BigInt(Math.floor(Date.now() / 1000)), nanos: 0 };
  n.status!.conditions.push(create(NodeConditionSchema, { type: 'KernelDeadlock', status: 'False', reason: 'KernelHasNoDeadlock', message: raw.placeholder, lastHeartbeatTime: now, lastTransitionTime: now }));
  const put = await putProtobuf(kc, `/api/v1/nodes/${node}/status`, NodeSchema, n, 'Node', 'v1', [raw]);
  if (put.status !== 200) throw new Error(`PUT nodes/${node}/status in protobuf: HTTP ${put.status} ${put.body}`);
  return raw;
}

/**
 * Whether the stored `node`, read in protobuf, still holds `bytes` as they are (a write applied to
 * the object's JSON would have replaced the invalid ones by U+FFFD).
 * @throws {Error} when the node cannot be read.
 */
export async function nodeHoldsBytes(clients: KubeClients, node: string, bytes: Uint8Array): Promise<boolean> {
  const res = await getRaw(clients.kubeConfig, `/api/v1/nodes/${node}`, {}, { accept: 'application/vnd.kubernetes.protobuf' });
  if (res.status !== 200) throw new Error(`GET nodes/${node} in protobuf: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer()).includes(Buffer.from(bytes));
}

/**
 * One last Lease renewal of each of `nodes`, sent together (their power fails right after it): every
 * renewal carries the same `renewTime`, and the writes land within milliseconds, so a controller that
 * reads Leases in a periodic pass sees all of them in the same pass. Call it after killing the nodes
 * in the fleet.
 * @throws {Error} when a renewal fails.
 */
export async function renewLeasesTogether(clients: KubeClients, nodes: readonly string[]): Promise<void> {
  const renewTime = toMicroTime(Date.now());
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  await Promise.all(nodes.map((name) => clients.coordination.patchNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE, body: { spec: { renewTime } } }, merge)));
}
