/**
 * The cluster state a what-if starts from: read once from the API server (list only, never a
 * write or a watch), or from a snapshot file that an earlier `what-if --save-snapshot` wrote.
 *
 * The file holds the controllers' slim objects (src/kube/objects.ts; times as epoch ms), not the
 * API's objects, so a 5,000-node cluster with 100,000 pods fits in tens of MB.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { getJson, type KubeClients } from '../kube/client.js';
import {
  toDaemonSet,
  toLease,
  toNode,
  toPersistentVolume,
  toPersistentVolumeClaim,
  toPodWithLabels,
  toVolumeAttachment,
  type DaemonSet,
  type Lease,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type VolumeAttachment,
} from '../kube/objects.js';
import { NODE_LEASE_NAMESPACE } from '../kube/informerfactory.js';
import { InputError } from '../util/errors.js';
import type { ClusterContents } from '../inmemory/types.js';

/** The `kind` written into snapshot files. */
export const SNAPSHOT_KIND = 'NodeLifecycleWhatIfSnapshot';

/**
 * Everything the what-if reads of a cluster: exactly the objects an in-memory cluster starts with
 * (one shape, so a snapshot is handed to the cluster as it is). `takenAt`: epoch ms (T+0 of the
 * simulation); `leases` are the node heartbeat Leases of `kube-node-lease`.
 */
export type ClusterSnapshot = ClusterContents;

/** Objects skipped because the API returned them malformed, by collection. */
export type SkippedCounts = Partial<Record<keyof Omit<ClusterSnapshot, 'takenAt'>, number>>;

const PAGE = 500;

/**
 * Lists every collection the controllers watch, read only (paginated GETs; no watch, no write).
 * Malformed objects are skipped and counted, as the informers do.
 * @param clients API clients (only `kubeConfig` is used).
 * @param now the snapshot's time, epoch ms.
 * @returns the snapshot and the skipped counts.
 * @throws {ApiException} when a list fails (e.g. 403 without RBAC to list VolumeAttachments).
 */
export async function listCluster(clients: Pick<KubeClients, 'kubeConfig'>, now: number): Promise<{ snapshot: ClusterSnapshot; skipped: SkippedCounts }> {
  const skipped: SkippedCounts = {};
  const list = async <T>(what: keyof SkippedCounts, path: string, convert: (raw: unknown) => T | undefined): Promise<T[]> => {
    const out: T[] = [];
    let cont: string | undefined;
    do {
      const page = (await getJson(clients.kubeConfig, path, { limit: PAGE, continue: cont })) as {
        items?: unknown[];
        metadata?: { continue?: string };
      };
      for (const raw of page.items ?? []) {
        const o = convert(raw);
        if (o === undefined) skipped[what] = (skipped[what] ?? 0) + 1;
        else out.push(o);
      }
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return out;
  };
  const [nodes, leases, pods, daemonSets, volumeAttachments, pvcs, pvs] = await Promise.all([
    list('nodes', '/api/v1/nodes', toNode),
    list('leases', `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`, toLease),
    list('pods', '/api/v1/pods', toPodWithLabels),
    list('daemonSets', '/apis/apps/v1/daemonsets', toDaemonSet),
    list('volumeAttachments', '/apis/storage.k8s.io/v1/volumeattachments', toVolumeAttachment),
    list('pvcs', '/api/v1/persistentvolumeclaims', toPersistentVolumeClaim),
    list('pvs', '/api/v1/persistentvolumes', toPersistentVolume),
  ]);
  return { snapshot: { takenAt: now, nodes, leases, pods, daemonSets, volumeAttachments, pvcs, pvs }, skipped };
}

/**
 * Writes a snapshot file (JSON).
 * @throws the file system's error (e.g. ENOENT for a missing directory).
 */
export async function saveSnapshot(path: string, s: ClusterSnapshot): Promise<void> {
  const body = { kind: SNAPSHOT_KIND, version: 1, ...s, takenAt: new Date(s.takenAt).toISOString() };
  await writeFile(path, JSON.stringify(body));
}

/**
 * Reads a snapshot file written by {@link saveSnapshot}.
 * @returns the snapshot (`takenAt` back to epoch ms).
 * @throws {InputError} (`--snapshot`, exit 2) when the file cannot be read, is not JSON, is not a
 *   snapshot (wrong `kind`/`version`), or a collection is missing, not a list, or holds an item
 *   without a string `name` (the message names the collection and the index).
 */
export async function loadSnapshot(path: string): Promise<ClusterSnapshot> {
  const bad = (why: string): never => {
    throw new InputError(`--snapshot: ${path}: ${why}`, 'snapshot');
  };
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    return bad((err as Error).message.split('\n')[0] ?? 'unreadable');
  }
  if (data === null || typeof data !== 'object') return bad('not a snapshot (expected a JSON object)');
  const o = data as Record<string, unknown>;
  if (o['kind'] !== SNAPSHOT_KIND || o['version'] !== 1) return bad(`not a snapshot: expected kind ${SNAPSHOT_KIND} version 1 (write one with \`what-if --save-snapshot\`)`);
  const takenAt = typeof o['takenAt'] === 'string' ? Date.parse(o['takenAt']) : NaN;
  if (!Number.isFinite(takenAt)) bad(`takenAt: not an RFC 3339 time: ${JSON.stringify(o['takenAt'])}`);
  const items = <T>(key: keyof SkippedCounts): T[] => {
    const v = o[key];
    if (!Array.isArray(v)) return bad(`${key}: missing or not a list`);
    v.forEach((item: unknown, i) => {
      if (item === null || typeof item !== 'object' || typeof (item as { name?: unknown }).name !== 'string') bad(`${key}[${i}]: not an object with a string name`);
    });
    return v as T[];
  };
  return {
    takenAt,
    nodes: items<Node>('nodes'),
    leases: items<Lease>('leases'),
    pods: items<Pod>('pods'),
    daemonSets: items<DaemonSet>('daemonSets'),
    volumeAttachments: items<VolumeAttachment>('volumeAttachments'),
    pvcs: items<PersistentVolumeClaim>('pvcs'),
    pvs: items<PersistentVolume>('pvs'),
  };
}
