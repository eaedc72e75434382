/**
 * Pure builders for the objects a simulated kubelet fleet puts into the API server: Nodes, node
 * Leases, Pods of each mix kind, DaemonSets, PersistentVolumes, PersistentVolumeClaims and CSI
 * VolumeAttachments, plus the kubelet's condition reasons and status bodies.
 *
 * No I/O and no clock reads: every timestamp is passed in (epoch **milliseconds**), so these are
 * unit-testable. `build*` functions return client-node typed objects for `create*` calls (their
 * serializer needs `Date`s); `*Patch` functions return plain wire JSON for patch bodies.
 */
import { createHash } from 'node:crypto';
import {
  V1MicroTime,
  type V1DaemonSet,
  type V1Lease,
  type V1Node,
  type V1NodeCondition,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1Toleration,
  type V1VolumeAttachment,
} from '@kubernetes/client-node';
import { toRfc3339 } from '../../../src/kube/objects.js';

/** Label carried by every object a fleet creates; its value is the fleet prefix. */
export const FLEET_LABEL = 'nlc.sim/fleet';
/** Label on pods naming their {@link PodKind}. */
export const POD_KIND_LABEL = 'nlc.sim/pod-kind';
/** Label on DaemonSet pods and in the DaemonSet selector. */
export const DAEMONSET_LABEL = 'nlc.sim/daemonset';
/** Default CSI driver name of simulated PersistentVolumes and VolumeAttachments. */
export const DEFAULT_CSI_DRIVER = 'sim.csi.nlc.dev';
/** Namespace of node heartbeat Leases (`v1.NamespaceNodeLease`). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Kubernetes version the simulated kubelets report (matches the local control plane). */
export const SIM_KUBELET_VERSION = 'v1.20.2';
/** Pause image used by every simulated container. */
export const SIM_IMAGE = 'registry.k8s.io/pause:3.9';

/**
 * The pod mix kinds:
 * - `plain`: no tolerations; the API server's DefaultTolerationSeconds admission adds the 300 s
 *   not-ready/unreachable NoExecute tolerations;
 * - `tolerationSeconds`: explicit not-ready/unreachable NoExecute tolerations with a configured
 *   `tolerationSeconds`;
 * - `tolerateForever`: the same tolerations without `tolerationSeconds`;
 * - `daemonSet`: owned by a real apps/v1 DaemonSet, with the DaemonSet controller's tolerations;
 * - `pvc`: mounts a bound PVC whose CSI PV is attached to the node through a VolumeAttachment.
 */
export type PodKind = 'plain' | 'tolerationSeconds' | 'tolerateForever' | 'daemonSet' | 'pvc';

/** Every pod kind, in the order ties are broken when assigning a mix. */
export const POD_KINDS: readonly PodKind[] = ['plain', 'tolerationSeconds', 'tolerateForever', 'daemonSet', 'pvc'];

/** Short name of each kind used in pod names. */
const KIND_SHORT: Readonly<Record<PodKind, string>> = {
  plain: 'plain',
  tolerationSeconds: 'tolsec',
  tolerateForever: 'forever',
  daemonSet: 'ds',
  pvc: 'pvc',
};

/** Relative weights of the pod kinds; missing kinds weigh 0. */
export type PodMix = Partial<Record<PodKind, number>>;

/** Default mix: one of each kind per five pods. */
export const DEFAULT_POD_MIX: Readonly<Record<PodKind, number>> = {
  plain: 1,
  tolerationSeconds: 1,
  tolerateForever: 1,
  daemonSet: 1,
  pvc: 1,
};

/**
 * Assigns a kind to each of `count` pods so that every kind's share follows its weight as closely
 * as possible at every prefix of the sequence (smooth weighted round-robin, as nginx balances
 * upstreams). Deterministic: the same weights and count always give the same sequence.
 * @param weights non-negative finite weights per kind.
 * @returns `count` kinds.
 * @throws {RangeError} when a weight is negative or not finite, or `count > 0` and every weight is 0.
 */
export function assignPodKinds(weights: PodMix, count: number): PodKind[] {
  const kinds: PodKind[] = [];
  let total = 0;
  for (const k of POD_KINDS) {
    const w = weights[k] ?? 0;
    if (!Number.isFinite(w) || w < 0) throw new RangeError(`pod mix weight for ${k} must be a non-negative number, got ${w}`);
    if (w > 0) {
      kinds.push(k);
      total += w;
    }
  }
  if (count > 0 && total === 0) throw new RangeError('pod mix has no positive weight but pods were requested');
  const current = new Map<PodKind, number>(kinds.map((k) => [k, 0]));
  const out: PodKind[] = [];
  for (let n = 0; n < count; n++) {
    let best: PodKind | undefined;
    let bestValue = -Infinity;
    for (const k of kinds) {
      const v = (current.get(k) as number) + (weights[k] as number);
      current.set(k, v);
      if (v > bestValue) {
        bestValue = v;
        best = k;
      }
    }
    const pick = best as PodKind;
    current.set(pick, (current.get(pick) as number) - total);
    out.push(pick);
  }
  return out;
}

/**
 * Default zone names: `zone-a`, `zone-b`, … `zone-z`, then `zone-26`, `zone-27`, ….
 * @throws {RangeError} when `count` is not a positive integer.
 */
export function defaultZoneNames(count: number): string[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`zone count must be a positive integer, got ${count}`);
  return Array.from({ length: count }, (_, i) => (i < 26 ? `zone-${String.fromCharCode(97 + i)}` : `zone-${i}`));
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Checks that `value` is an RFC 1123 DNS label (lowercase alphanumerics and `-`, at most `maxLength`).
 * @throws {RangeError} naming `what` when it is not.
 */
export function assertDnsLabel(what: string, value: string, maxLength = 63): void {
  if (value.length === 0 || value.length > maxLength || !DNS_LABEL.test(value)) {
    throw new RangeError(
      `${what} "${value}" must be 1-${maxLength} lowercase letters, digits or '-', starting and ending with a letter or digit`,
    );
  }
}

/** Node name of the `i`-th node (0-based) of `zone`: `${prefix}-${zone}-${i}`. */
export function simNodeName(prefix: string, zone: string, i: number): string {
  return `${prefix}-${zone}-${i}`;
}

/** Pod name of the `j`-th pod on a node. */
export function simPodName(nodeName: string, kind: PodKind, j: number): string {
  return `${nodeName}-${KIND_SHORT[kind]}-${j}`;
}

/** Lowercase hex SHA-256. */
function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The VolumeAttachment name CSI attach uses: `csi-<hex(sha256(volumeHandle + driver + nodeName))>`.
 * Mirrors `pkg/volume/csi/csi_attacher.go` `getAttachmentName` (string concatenation, no separators).
 */
export function csiAttachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return `csi-${sha256(volumeHandle + driver + nodeName)}`;
}

/**
 * Unique volume name the kubelet reports in `node.status.volumesInUse` / `volumesAttached` for a
 * CSI volume: `kubernetes.io/csi/<driver>^<volumeHandle>`.
 * Mirrors `pkg/volume/csi/csi_plugin.go` `GetVolumeName` joined by `util.GetUniqueVolumeName`.
 */
export function csiUniqueVolumeName(driver: string, volumeHandle: string): string {
  return `kubernetes.io/csi/${driver}^${volumeHandle}`;
}

/** Finalizer the CSI external-attacher puts on its VolumeAttachments (`external-attacher/<driver with / as ~>`). */
export function attacherFinalizer(driver: string): string {
  return `external-attacher/${driver.replaceAll('/', '~')}`;
}

// ---------------------------------------------------------------------------
// Node conditions with the kubelet's reasons and messages
// (pkg/kubelet/nodestatus/setters.go: ReadyCondition, MemoryPressureCondition,
// DiskPressureCondition, PIDPressureCondition).
// ---------------------------------------------------------------------------

/** Conditions that a fault can flip. `NetworkUnavailable` is owned by the network/route controller, not the kubelet. */
export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure' | 'NetworkUnavailable';

/** Every condition type a fault can flip. */
export const PRESSURE_CONDITIONS: readonly PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'];

/** A node condition as the simulator holds it. `lastTransitionTime` is epoch ms. */
export interface SimCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
  /** epoch ms */
  lastTransitionTime: number;
}

const PRESSURE_TEXT: Readonly<Record<PressureCondition, { on: [string, string]; off: [string, string] }>> = {
  MemoryPressure: {
    on: ['KubeletHasInsufficientMemory', 'kubelet has insufficient memory available'],
    off: ['KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  },
  DiskPressure: {
    on: ['KubeletHasDiskPressure', 'kubelet has disk pressure'],
    off: ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  },
  PIDPressure: {
    on: ['KubeletHasInsufficientPID', 'kubelet has insufficient PID available'],
    off: ['KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
  },
  // Set by the cloud route controller (pkg/controller/route/route_controller.go) or the CNI plugin.
  NetworkUnavailable: {
    on: ['NoRouteCreated', 'Node created without a route'],
    off: ['RouteCreated', 'RouteController created a route'],
  },
};

/** Reason and message of a Ready node (`KubeletReady`). */
export const READY_TRUE = { reason: 'KubeletReady', message: 'kubelet is posting ready status' } as const;
/** Reason and message the kubelet posts during a graceful node shutdown (`pkg/kubelet/nodeshutdown`). */
export const READY_SHUTTING_DOWN = { reason: 'KubeletNotReady', message: 'node is shutting down' } as const;
/** Pod status reason of pods terminated by a graceful node shutdown (`nodeShutdownReason`). */
export const SHUTDOWN_POD_REASON = 'Terminated';
/** Pod status message of pods terminated by a graceful node shutdown (`nodeShutdownMessage`). */
export const SHUTDOWN_POD_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';

/** Builds a pressure condition with the kubelet's reason and message for `on`. */
export function pressureCondition(type: PressureCondition, on: boolean, transitionMs: number): SimCondition {
  const [reason, message] = on ? PRESSURE_TEXT[type].on : PRESSURE_TEXT[type].off;
  return { type, status: on ? 'True' : 'False', reason, message, lastTransitionTime: transitionMs };
}

/** Builds the Ready condition: True (`KubeletReady`) or False while shutting down (`KubeletNotReady`). */
export function readyCondition(ready: boolean, transitionMs: number): SimCondition {
  const text = ready ? READY_TRUE : READY_SHUTTING_DOWN;
  return { type: 'Ready', status: ready ? 'True' : 'False', ...text, lastTransitionTime: transitionMs };
}

/** The initial condition set of a healthy node: Ready, the three pressures, NetworkUnavailable=False. */
export function initialConditions(nowMs: number): SimCondition[] {
  return [
    readyCondition(true, nowMs),
    pressureCondition('MemoryPressure', false, nowMs),
    pressureCondition('DiskPressure', false, nowMs),
    pressureCondition('PIDPressure', false, nowMs),
    pressureCondition('NetworkUnavailable', false, nowMs),
  ];
}

/** Kubelet-owned condition types whose `lastHeartbeatTime` moves on every status post. */
export const KUBELET_CONDITION_TYPES: ReadonlySet<string> = new Set(['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']);

/**
 * Wire JSON of one condition for a `nodes/status` strategic merge patch (conditions merge by `type`).
 * @param heartbeatMs epoch ms written as `lastHeartbeatTime`.
 */
export function conditionToWire(c: SimCondition, heartbeatMs: number): Record<string, string> {
  return {
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message,
    lastHeartbeatTime: toRfc3339(heartbeatMs),
    lastTransitionTime: toRfc3339(c.lastTransitionTime),
  };
}

function conditionToTyped(c: SimCondition, heartbeatMs: number): V1NodeCondition {
  return {
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message,
    lastHeartbeatTime: new Date(heartbeatMs),
    lastTransitionTime: new Date(c.lastTransitionTime),
  };
}

// ---------------------------------------------------------------------------
// Nodes and Leases
// ---------------------------------------------------------------------------

/** What it takes to build one simulated Node. */
export interface SimNodeSpec {
  prefix: string;
  name: string;
  zone: string;
  region: string;
  /** 0-based index of the node in the whole fleet; picks its IP and pod CIDR. */
  index: number;
  conditions: readonly SimCondition[];
  /** CSI unique volume names reported attached and in use. */
  volumes: readonly string[];
  /**
   * Where the node's simulated kubelet serves HTTPS (packages/sim/src/kubeletserver.ts). When set, the node reports
   * `address` as its only address (InternalIP) and `port` as `daemonEndpoints.kubeletEndpoint.Port`:
   * kube-apiserver's default `--kubelet-preferred-address-types` try Hostname first, and a simulated
   * node's hostname resolves nowhere, so the node proxy would fail on it.
   */
  kubeletEndpoint?: { address: string; port: number };
}

/** InternalIP of fleet node `index`: 172.16.0.0/12 space, one address per node (172.16.0.0 itself is skipped). */
export function nodeIp(index: number): string {
  const n = index + 1;
  return `172.${16 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${n & 255}`;
}

/** Pod CIDR (a /24) of fleet node `index`, inside 10.64.0.0/10. */
export function nodePodCidr(index: number): string {
  return `10.${64 + ((index >> 8) & 63)}.${index & 255}.0/24`;
}

/** IP of the `j`-th pod on node `index` (j < 250). */
export function podIp(index: number, j: number): string {
  return `10.${64 + ((index >> 8) & 63)}.${index & 255}.${2 + (j % 250)}`;
}

/**
 * The labels a kubelet registers with: zone/region (stable and `failure-domain.beta` twins),
 * hostname, os and arch (stable and beta), plus the fleet label.
 */
export function nodeLabels(spec: Pick<SimNodeSpec, 'prefix' | 'name' | 'zone' | 'region'>): Record<string, string> {
  return {
    [FLEET_LABEL]: spec.prefix,
    'topology.kubernetes.io/zone': spec.zone,
    'topology.kubernetes.io/region': spec.region,
    'failure-domain.beta.kubernetes.io/zone': spec.zone,
    'failure-domain.beta.kubernetes.io/region': spec.region,
    'kubernetes.io/hostname': spec.name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
  };
}

/**
 * A Node as a kubelet registers it, with full status (capacity, allocatable, conditions, nodeInfo,
 * addresses, daemonEndpoints and, when it has any, attached volumes).
 * Mirrors `pkg/kubelet/kubelet_node_status.go` `initialNode` plus the status setters.
 */
export function buildNode(spec: SimNodeSpec, nowMs: number): V1Node {
  const idHex = sha256(`${spec.prefix}/${spec.name}`);
  const machineId = idHex.slice(0, 32);
  const uuid = `${idHex.slice(0, 8)}-${idHex.slice(8, 12)}-${idHex.slice(12, 16)}-${idHex.slice(16, 20)}-${idHex.slice(20, 32)}`;
  const cidr = nodePodCidr(spec.index);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      labels: nodeLabels(spec),
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: { podCIDR: cidr, podCIDRs: [cidr], providerID: `sim://${spec.region}/${spec.zone}/${spec.name}` },
    status: {
      capacity: {
        cpu: '4',
        memory: '16393220Ki',
        pods: '110',
        'ephemeral-storage': '104845292Ki',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
      },
      allocatable: {
        cpu: '3920m',
        memory: '15766532Ki',
        pods: '110',
        'ephemeral-storage': '96625420948',
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
      },
      conditions: spec.conditions.map((c) => conditionToTyped(c, nowMs)),
      addresses: spec.kubeletEndpoint
        ? [{ type: 'InternalIP', address: spec.kubeletEndpoint.address }]
        : [
            { type: 'InternalIP', address: nodeIp(spec.index) },
            { type: 'Hostname', address: spec.name },
          ],
      daemonEndpoints: { kubeletEndpoint: { Port: spec.kubeletEndpoint?.port ?? 10250 } },
      nodeInfo: {
        machineID: machineId,
        systemUUID: uuid,
        bootID: sha256(`${idHex}/${nowMs}`).slice(0, 32),
        kernelVersion: '6.1.0-28-amd64',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://1.6.20',
        kubeletVersion: SIM_KUBELET_VERSION,
        kubeProxyVersion: SIM_KUBELET_VERSION,
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      volumesAttached: spec.volumes.map((name) => ({ name, devicePath: '' })),
      volumesInUse: [...spec.volumes],
    },
  };
}

/**
 * The node's heartbeat Lease (`kube-node-lease/<node>`), owned by its Node.
 * Mirrors `pkg/kubelet/nodelease/controller.go` `newLease`.
 * @param leaseDurationSeconds seconds
 * @param renewMs epoch ms of the renewal (sent as MicroTime)
 */
export function buildLease(
  prefix: string,
  nodeName: string,
  nodeUid: string | undefined,
  leaseDurationSeconds: number,
  renewMs: number,
): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: nodeName,
      namespace: NODE_LEASE_NAMESPACE,
      labels: { [FLEET_LABEL]: prefix },
      ...(nodeUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid }] } : {}),
    },
    spec: { holderIdentity: nodeName, leaseDurationSeconds, renewTime: new V1MicroTime(renewMs) },
  };
}

// ---------------------------------------------------------------------------
// Pods
// ---------------------------------------------------------------------------

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/**
 * NoExecute tolerations for not-ready and unreachable, with `tolerationSeconds` when given
 * (seconds) or tolerating forever when `undefined`.
 */
export function notReadyTolerations(tolerationSeconds: number | undefined): V1Toleration[] {
  return [NOT_READY, UNREACHABLE].map((key) => ({
    key,
    operator: 'Exists',
    effect: 'NoExecute',
    ...(tolerationSeconds !== undefined ? { tolerationSeconds } : {}),
  }));
}

/**
 * The tolerations the DaemonSet controller adds to every daemon pod.
 * Mirrors `pkg/controller/daemon/util/daemonset_util.go` `AddOrUpdateDaemonPodTolerations`
 * (network-unavailable only for hostNetwork pods, which simulated pods are not).
 */
export function daemonSetTolerations(): V1Toleration[] {
  return [
    ...notReadyTolerations(undefined),
    ...['disk-pressure', 'memory-pressure', 'pid-pressure', 'unschedulable'].map((t) => ({
      key: `node.kubernetes.io/${t}`,
      operator: 'Exists',
      effect: 'NoSchedule',
    })),
  ];
}

/** What it takes to build one simulated pod. */
export interface SimPodSpec {
  prefix: string;
  namespace: string;
  name: string;
  nodeName: string;
  kind: PodKind;
  /** seconds, for `tolerationSeconds` pods */
  tolerationSeconds: number;
  /** Owner for `daemonSet` pods. */
  daemonSet?: { name: string; uid: string };
  /** Claim for `pvc` pods. */
  pvcName?: string;
}

/**
 * A pod bound to its node (`spec.nodeName` set, no scheduler involved). Service-account token
 * automount is off because no token controller runs on the local control plane.
 */
export function buildPod(spec: SimPodSpec): V1Pod {
  const labels: Record<string, string> = { [FLEET_LABEL]: spec.prefix, [POD_KIND_LABEL]: spec.kind };
  let tolerations: V1Toleration[] | undefined;
  let ownerReferences: NonNullable<V1Pod['metadata']>['ownerReferences'];
  let affinity: NonNullable<V1Pod['spec']>['affinity'];
  switch (spec.kind) {
    case 'tolerationSeconds':
      tolerations = notReadyTolerations(spec.tolerationSeconds);
      break;
    case 'tolerateForever':
      tolerations = notReadyTolerations(undefined);
      break;
    case 'daemonSet':
      tolerations = daemonSetTolerations();
      if (spec.daemonSet) {
        labels[DAEMONSET_LABEL] = spec.daemonSet.name;
        labels['pod-template-generation'] = '1';
        ownerReferences = [
          {
            apiVersion: 'apps/v1',
            kind: 'DaemonSet',
            name: spec.daemonSet.name,
            uid: spec.daemonSet.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ];
      }
      // The DaemonSet controller pins each daemon pod to its node this way (daemonset_util.go `ReplaceDaemonSetPodNodeNameNodeAffinity`).
      affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [spec.nodeName] }] }],
          },
        },
      };
      break;
    default:
      break;
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: spec.name,
      namespace: spec.namespace,
      labels,
      ...(ownerReferences ? { ownerReferences } : {}),
    },
    spec: {
      nodeName: spec.nodeName,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'app',
          image: SIM_IMAGE,
          ...(spec.pvcName ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
        },
      ],
      ...(spec.pvcName ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: spec.pvcName } }] } : {}),
      ...(tolerations ? { tolerations } : {}),
      ...(affinity ? { affinity } : {}),
    },
  };
}

/**
 * `pods/status` merge-patch body that reports a pod Running and Ready, as the kubelet's status
 * manager does once its containers start (`pkg/kubelet/status/status_manager.go`).
 * @param nowMs epoch ms used for start and transition times.
 */
export function runningPodStatusPatch(podName: string, hostIp: string, ip: string, nowMs: number): Record<string, unknown> {
  const t = toRfc3339(nowMs);
  const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t });
  return {
    status: {
      phase: 'Running',
      hostIP: hostIp,
      podIP: ip,
      podIPs: [{ ip }],
      startTime: t,
      conditions: [cond('Initialized'), cond('Ready'), cond('ContainersReady'), cond('PodScheduled')],
      containerStatuses: [
        {
          name: 'app',
          ready: true,
          started: true,
          restartCount: 0,
          image: SIM_IMAGE,
          imageID: `${SIM_IMAGE.split(':')[0]}@sha256:${sha256(SIM_IMAGE)}`,
          containerID: `containerd://${sha256(`${podName}/${nowMs}`)}`,
          state: { running: { startedAt: t } },
        },
      ],
    },
  };
}

/**
 * `pods/status` merge-patch body for a pod killed by a graceful node shutdown: phase Failed with
 * the kubelet's reason and message, containers terminated, and the `DisruptionTarget` condition
 * newer kubelets add (`pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go` `processShutdownEvent`).
 * @param nowMs epoch ms of the termination.
 */
export function shutdownPodStatusPatch(nowMs: number): Record<string, unknown> {
  const t = toRfc3339(nowMs);
  return {
    status: {
      phase: 'Failed',
      reason: SHUTDOWN_POD_REASON,
      message: SHUTDOWN_POD_MESSAGE,
      conditions: [
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: t },
        { type: 'Ready', status: 'False', reason: 'PodFailed', lastProbeTime: null, lastTransitionTime: t },
        { type: 'ContainersReady', status: 'False', reason: 'PodFailed', lastProbeTime: null, lastTransitionTime: t },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: t },
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'TerminationByKubelet',
          message: SHUTDOWN_POD_MESSAGE,
          lastProbeTime: null,
          lastTransitionTime: t,
        },
      ],
      containerStatuses: [
        {
          name: 'app',
          ready: false,
          started: false,
          restartCount: 0,
          image: SIM_IMAGE,
          imageID: `${SIM_IMAGE.split(':')[0]}@sha256:${sha256(SIM_IMAGE)}`,
          state: { terminated: { exitCode: 143, reason: 'Error', startedAt: t, finishedAt: t } },
        },
      ],
    },
  };
}

// ---------------------------------------------------------------------------
// DaemonSets, PVs, PVCs, VolumeAttachments
// ---------------------------------------------------------------------------

/**
 * A real apps/v1 DaemonSet whose selector matches its simulated daemon pods. Nothing reconciles
 * it (no DaemonSet controller runs); it exists so pods have a genuine owner.
 */
export function buildDaemonSet(prefix: string, namespace: string, name: string): V1DaemonSet {
  const labels = { [FLEET_LABEL]: prefix, [DAEMONSET_LABEL]: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace, labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { automountServiceAccountToken: false, containers: [{ name: 'app', image: SIM_IMAGE }] },
      },
    },
  };
}

/** Storage class name written on simulated PVs and PVCs (no StorageClass object is needed for static binding). */
export const SIM_STORAGE_CLASS = 'nlc-sim';

/** Names and handle of one pod's volume. */
export interface SimVolume {
  pvcName: string;
  pvName: string;
  volumeHandle: string;
  /** The `csi-<hash>` VolumeAttachment name. */
  attachmentName: string;
  /** `kubernetes.io/csi/<driver>^<handle>` */
  uniqueName: string;
}

/** Derives the PVC, PV, volume handle and VolumeAttachment names for a `pvc` pod. */
export function simVolumeFor(podName: string, nodeName: string, driver: string): SimVolume {
  const pvName = `${podName}-pv`;
  const volumeHandle = `vol-${sha256(pvName).slice(0, 20)}`;
  return {
    pvcName: `data-${podName}`,
    pvName,
    volumeHandle,
    attachmentName: csiAttachmentName(volumeHandle, driver, nodeName),
    uniqueName: csiUniqueVolumeName(driver, volumeHandle),
  };
}

/** A PVC pre-bound to its PV (static binding; no PV controller runs). */
export function buildPvc(prefix: string, namespace: string, vol: SimVolume): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: vol.pvcName,
      namespace,
      labels: { [FLEET_LABEL]: prefix },
      annotations: { 'pv.kubernetes.io/bind-completed': 'yes' },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: SIM_STORAGE_CLASS,
      volumeName: vol.pvName,
    },
  };
}

/** A CSI PersistentVolume bound to its claim (`claimRef` carries the PVC's uid). */
export function buildPv(
  prefix: string,
  namespace: string,
  vol: SimVolume,
  driver: string,
  pvcUid: string | undefined,
): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: vol.pvName, labels: { [FLEET_LABEL]: prefix } },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: SIM_STORAGE_CLASS,
      csi: { driver, volumeHandle: vol.volumeHandle, fsType: 'ext4' },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace,
        name: vol.pvcName,
        ...(pvcUid ? { uid: pvcUid } : {}),
      },
    },
  };
}

/** `persistentvolumeclaims/status` merge-patch body: Bound with its capacity. */
export function boundPvcStatusPatch(): Record<string, unknown> {
  return { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } };
}

/** `persistentvolumes/status` merge-patch body: Bound. */
export function boundPvStatusPatch(): Record<string, unknown> {
  return { status: { phase: 'Bound' } };
}

/**
 * The VolumeAttachment the A/D controller's CSI attacher creates for a PV on a node, carrying the
 * external-attacher's finalizer. Mirrors `pkg/volume/csi/csi_attacher.go` `Attach`.
 */
export function buildVolumeAttachment(prefix: string, vol: SimVolume, driver: string, nodeName: string): V1VolumeAttachment {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: {
      name: vol.attachmentName,
      labels: { [FLEET_LABEL]: prefix },
      finalizers: [attacherFinalizer(driver)],
    },
    spec: { attacher: driver, nodeName, source: { persistentVolumeName: vol.pvName } },
  };
}

/** `volumeattachments/status` merge-patch body the external-attacher writes after ControllerPublish. */
export function attachedStatusPatch(): Record<string, unknown> {
  return { status: { attached: true } };
}
