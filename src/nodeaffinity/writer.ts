/**
 * The one write of the node affinity enforcer: a policy/v1 Eviction (`POST
 * /api/v1/namespaces/{ns}/pods/{name}/eviction`), so PodDisruptionBudgets hold.
 *
 * The write goes through the controller's {@link WriteScheduler} (the `--kube-api-qps` throttle and
 * fencing gate). That throttle re-sends a write answered 429 with `Retry-After` (src/kube/writer.ts
 * `retryAfterMs`), which is right for API priority-and-fairness 429s but not for a PDB refusal: the
 * eviction REST answers "Cannot evict pod as it would violate the pod's disruption budget." as 429
 * (with `Retry-After: 10` while the PDB is still being processed) and details.causes of type
 * `DisruptionBudget`. So the function given to the throttle catches a PDB refusal itself and
 * resolves with `blocked-by-pdb`: the throttle never sees it as an error and never retries it
 * blindly; the controller backs off and explains (controller.ts). Every other 429 still reaches the
 * throttle's `Retry-After` handling.
 */
import type { V1Eviction } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node';
import { apiStatusCode, isConflict, isNotFound, type KubeClients } from '../kube/client.js';
import type { WriteRecheck, WriteScheduler } from '../kube/throttle.js';

/** `policyv1.DisruptionBudgetCause`. */
export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';

/** The pod an eviction is for. */
export interface EvictionTarget {
  namespace: string;
  name: string;
  uid: string;
}

/** How an eviction ended. */
export type EvictionOutcome =
  | { kind: 'evicted' }
  /** 404: the pod is gone; 409: the UID precondition failed (the name now holds another pod). */
  | { kind: 'gone'; detail: string }
  /** Refused by a PodDisruptionBudget (429, or 403 with a DisruptionBudget cause). */
  | { kind: 'blocked-by-pdb'; message: string };

/**
 * Performs evictions. The production implementation is {@link AffinityEvictionWriter}; a dry-run
 * (shadow) writer would implement the same method without writing, and tests record calls.
 */
export interface AffinityEvictor {
  /**
   * Evicts one pod (UID precondition).
   * @param recheck the eviction decided again right before it is sent (src/kube/throttle.ts `WriteRecheck`).
   * @returns the outcome; see {@link EvictionOutcome}.
   * @throws any other API or network error, `FencedError` when the process may not write, and
   *   `NotCalledForError` when `recheck` withheld it.
   */
  evict(target: EvictionTarget, recheck?: WriteRecheck): Promise<EvictionOutcome>;
}

/**
 * When `err` is a PDB refusal of an eviction, its explanation; otherwise undefined.
 * Upstream: `pkg/registry/core/pod/storage/eviction.go` (`createTooManyRequestsError`,
 * `checkAndDecrement`): 429 TooManyRequests, or 403 Forbidden, with a cause of type
 * `DisruptionBudget` (on the wire: `details.causes[].reason`), e.g. from 1.37.2:
 * `{"message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests",
 * "details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget g needs 1 healthy pods and has 1 currently"}]},"code":429}`.
 * @param err anything a client-node call threw.
 */
export function pdbRefusal(err: unknown): string | undefined {
  const code = apiStatusCode(err);
  if (code !== 429 && code !== 403) return undefined;
  if (!(err instanceof ApiException)) return undefined;
  // metav1.StatusCause's Type is serialised as "reason" (`json:"reason,omitempty"`).
  let status: { message?: unknown; details?: { causes?: { reason?: unknown; message?: unknown }[] } } | undefined;
  try {
    const body: unknown = err.body;
    status = (typeof body === 'string' ? JSON.parse(body) : body) as typeof status;
  } catch {
    status = undefined;
  }
  const causes = (status?.details?.causes ?? []).filter((c) => c.reason === DISRUPTION_BUDGET_CAUSE);
  const message = typeof status?.message === 'string' ? status.message : '';
  if (causes.length === 0 && !(code === 429 && message.includes('disruption budget'))) return undefined;
  const detail = causes.map((c) => (typeof c.message === 'string' ? c.message : '')).filter(Boolean);
  return [message, ...detail].filter(Boolean).join(' ') || 'refused by a PodDisruptionBudget';
}

/** Evicts through the policy/v1 Eviction API, under the controller's write throttle. */
export class AffinityEvictionWriter implements AffinityEvictor {
  readonly #clients: KubeClients;
  readonly #throttle: WriteScheduler;

  /**
   * @param clients typed clients (the core client's `createNamespacedPodEviction`).
   * @param throttle the controller's write scheduler (QPS throttle + fencing gate).
   */
  constructor(clients: KubeClients, throttle: WriteScheduler) {
    this.#clients = clients;
    this.#throttle = throttle;
  }

  /** See {@link AffinityEvictor.evict}. */
  evict(target: EvictionTarget, recheck?: WriteRecheck): Promise<EvictionOutcome> {
    const body: V1Eviction = {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: target.name, namespace: target.namespace },
      deleteOptions: { preconditions: { uid: target.uid } },
    };
    return this.#throttle.schedule(async (): Promise<EvictionOutcome> => {
      try {
        await this.#clients.core.createNamespacedPodEviction({ name: target.name, namespace: target.namespace, body });
        return { kind: 'evicted' };
      } catch (err) {
        // Caught here, inside the throttled function, so the throttle's Retry-After loop never
        // re-sends a PDB refusal (see the module comment).
        const pdb = pdbRefusal(err);
        if (pdb !== undefined) return { kind: 'blocked-by-pdb', message: pdb };
        if (isNotFound(err)) return { kind: 'gone', detail: 'pod not found (404)' };
        if (isConflict(err)) return { kind: 'gone', detail: 'UID precondition failed (409): the name holds another pod' };
        throw err;
      }
    }, 'pod', recheck);
  }
}
