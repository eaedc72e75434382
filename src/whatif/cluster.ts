/**
 * The in-memory cluster a what-if runs in lives in src/inmemory/ (shared with the unit-test
 * worlds); this module keeps the what-if's import path for it.
 */
export { InMemoryCluster, KUBELET_LEASE_RENEW_MS } from '../inmemory/cluster.js';
export type { ClusterHandlers, ResourceHandlers, TimelineEntry } from '../inmemory/cluster.js';
