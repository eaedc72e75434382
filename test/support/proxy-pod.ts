/**
 * A stand-in for the controller's leader pod that the API server's pod proxy can reach: a Pod whose
 * status carries this machine's first non-loopback IPv4 address (no kubelet runs here, so the status
 * is written directly), and an election Lease whose holder identity names it (`<pod>_<uuid>`). A
 * controller started by the test on all interfaces then answers what the proxy forwards.
 */
import { randomUUID } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeClients } from '../../src/kube/client.js';

/** This machine's first non-loopback IPv4 address, or undefined when it has none (the proxy cannot reach a loopback one). */
export function hostIPv4(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

/**
 * Creates the Pod `podName` with `podIP` = `ip` in `namespace` and the Lease `leaseName` held by it.
 * @param nodeName bind the pod to this Node (a port-forward goes to the pod's node's kubelet: see
 *   test/support/portforward-kubelet.ts); default: unbound (the pod proxy needs only the pod IP).
 * @returns the holder identity and a function that deletes both (never rejects).
 * @throws {Error} when a create or the status patch fails.
 */
export async function createProxiedLeaderPod(
  clients: KubeClients,
  namespace: string,
  podName: string,
  leaseName: string,
  ip: string,
  nodeName?: string,
): Promise<{ identity: string; remove: () => Promise<void> }> {
  const identity = `${podName}_${randomUUID()}`;
  await clients.core.createNamespacedPod({
    namespace,
    body: { metadata: { name: podName }, spec: { ...(nodeName ? { nodeName } : {}), automountServiceAccountToken: false, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] } },
  });
  await clients.core.patchNamespacedPodStatus(
    { namespace, name: podName, body: { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await clients.coordination.createNamespacedLease({
    namespace,
    body: { metadata: { name: leaseName }, spec: { holderIdentity: identity, leaseDurationSeconds: 15 } },
  });
  return {
    identity,
    remove: async () => {
      await clients.core.deleteNamespacedPod({ namespace, name: podName, gracePeriodSeconds: 0 }).catch(() => undefined);
      await clients.coordination.deleteNamespacedLease({ namespace, name: leaseName }).catch(() => undefined);
    },
  };
}
