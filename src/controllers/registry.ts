/**
 * The controller registry: the one loop that decides which controllers of the table (./table.ts) run, builds them and subscribes their cache handlers. `run`
 * (src/cli/run.ts), `run --dry-run` and `what-if` (src/whatif/run.ts) all go through it, so they
 * run the same controllers with the same wiring; only the context differs (src/controllers/context.ts).
 *
 * Upstream analogue: `NewControllerDescriptors` (`cmd/kube-controller-manager/app/controllermanager.go`)
 * and the loop of `StartControllers` over it.
 */
import type { Logger } from '../log/logger.js';
import type { ControllerConfig } from './config.js';
import type { ControllerContext, ControllerDescriptor, ControllerKey, Controllers, ControllerSources, SourceName } from './context.js';
import { isControllerEnabled } from './names.js';
import { CONTROLLER_REGISTRY } from './table.js';

/** The built controllers by {@link ControllerKey}; absent when not enabled. */
export type BuiltControllers = Partial<Controllers>;

/** The common surface of every controller: started once leading, stopped on shutdown, shown on `/debug/state`. */
export interface RunnableController {
  start(): void;
  stop(): Promise<void>;
  view(): unknown;
}

/**
 * The descriptors that run under `config`, in start order: enabled by `--controllers`
 * ({@link isControllerEnabled}) and not switched off by another flag (`notStartedBecause`).
 * @param log when given, each controller that `--controllers` enables but another flag switches
 *   off is logged at info, as `run` always did.
 * @returns the descriptors. Never throws.
 */
export function enabledControllers(config: ControllerConfig, log?: Pick<Logger, 'info'>): ControllerDescriptor[] {
  const out: ControllerDescriptor[] = [];
  for (const d of CONTROLLER_REGISTRY as readonly ControllerDescriptor[]) {
    if (!isControllerEnabled(config, d.name)) continue;
    const why = d.notStartedBecause?.(config);
    if (why !== undefined) {
      log?.info({}, `${d.name} not started: ${why}`);
      continue;
    }
    out.push(d);
  }
  return out;
}

/**
 * What the enabled controllers need of the caches.
 * @returns `sources`: the union of their {@link ControllerDescriptor.informers}; `podLabels`: whether
 *   the shared pod cache must keep labels. Never throws.
 */
export function neededSources(config: ControllerConfig, enabled: readonly ControllerDescriptor[]): { sources: Set<SourceName>; podLabels: boolean } {
  return {
    sources: new Set(enabled.flatMap((d) => d.informers)),
    podLabels: enabled.some((d) => d.needsPodLabels?.(config) === true),
  };
}

/**
 * Builds every enabled controller and subscribes its handlers, in registry order (each one's
 * handlers right after it is built, as `run` always did). Nothing is started.
 * @param ctx the context (`ctx.sources` must hold every cache the descriptors declare).
 * @param enabled from {@link enabledControllers}.
 * @returns the controllers by key, and `list`: them in start order.
 * @throws {Error} when a declared cache is missing from `ctx.sources` (a programming error).
 */
export function buildControllers(
  ctx: ControllerContext,
  enabled: readonly ControllerDescriptor[],
): { byKey: BuiltControllers; list: { name: string; key: ControllerKey; controller: RunnableController }[] } {
  const byKey: BuiltControllers = {};
  const list: { name: string; key: ControllerKey; controller: RunnableController }[] = [];
  for (const d of enabled) {
    const controller = buildOne(d, ctx, ctx.sources);
    (byKey as Record<ControllerKey, RunnableController>)[d.key] = controller;
    list.push({ name: d.name, key: d.key, controller });
  }
  return { byKey, list };
}

/** Builds and subscribes one controller; generic so `build`'s result and `subscribe`'s argument agree. */
function buildOne<K extends ControllerKey>(d: ControllerDescriptor<K>, ctx: ControllerContext, sources: ControllerSources): Controllers[K] {
  const controller = d.build(ctx);
  d.subscribe(controller, sources);
  return controller;
}

/**
 * How long (milliseconds) the node or lease cache may be without a watch stream before the node
 * lifecycle controller stops judging nodes. Reconnects take milliseconds; an API outage takes longer.
 */
export const BLIND_AFTER_MS = 2000;

/**
 * The context's sight checks over `sources`.
 * @returns `canSeeCluster`: the node and lease caches are synced and neither has been without a
 *   watch stream for longer than {@link BLIND_AFTER_MS} (reacting to every reconnect would reset
 *   every probe timestamp each time a quiet watch ends, every 30 s); it is asked on every Lease
 *   event and for every node of every pass, so it builds no array per call. `sees`: a check that
 *   every given cache is synced and watching. Never throws.
 */
export function sightOf(sources: Pick<ControllerSources, 'nodes' | 'leases'>): Pick<ControllerContext, 'canSeeCluster' | 'sees'> {
  const { nodes, leases } = sources;
  return {
    canSeeCluster: () => nodes.hasSynced() && nodes.blindForMs() < BLIND_AFTER_MS && leases.hasSynced() && leases.blindForMs() < BLIND_AFTER_MS,
    sees: (list) => () => list.every((s) => s.hasSynced() && s.isWatching()),
  };
}
