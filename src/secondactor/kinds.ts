/**
 * The kinds of second-actor action, the `kind` label of `node_lifecycle_second_actor_actions_total`
 * (src/metrics/registry.ts starts each at 0). Their meaning is in ./decision.ts; a file of its own so
 * the metrics registry imports no decision code.
 */

/** The `kind` label of `node_lifecycle_second_actor_actions_total`. */
export type SecondActorKind = 'taint' | 'pod-deletion' | 'disruption-target' | 'event';
/** Every {@link SecondActorKind}, in the order /debug/state and the docs list them. */
export const SECOND_ACTOR_KINDS: readonly SecondActorKind[] = ['taint', 'disruption-target', 'pod-deletion', 'event'];
