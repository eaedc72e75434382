/**
 * The shared test cluster's Kubernetes minor, read from its /version the way the controller reads
 * it (src/kube/serverversion.ts), so a test that depends on a feature decides from the server it
 * runs against rather than from the lane's name.
 */
import { getJson } from '../../src/kube/client.js';
import { parseServerVersion } from '../../src/kube/serverversion.js';
import { testClients } from './cluster.js';

/**
 * The minor of the shared cluster's API server (e.g. 34), or undefined when it cannot be read: an
 * unreachable server is not a reason to skip; the tests then fail and say so.
 */
export async function laneMinor(): Promise<number | undefined> {
  try {
    return parseServerVersion(await getJson(testClients().kubeConfig, '/version', {}))?.minor;
  } catch {
    return undefined;
  }
}

/**
 * A `skip` value for a test that needs a feature first served in `1.<since>`.
 * @param minor {@link laneMinor}'s answer.
 * @param what the feature, for the skip reason.
 * @returns false (run it) or the reason to skip.
 */
export function skipBelow(minor: number | undefined, since: number, what: string): string | false {
  return minor !== undefined && minor < since ? `${what} needs Kubernetes >= 1.${since}; this server is 1.${minor}` : false;
}
