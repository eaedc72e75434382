// Why this file is over 500 lines: both guards' pure hysteresis (breaker and storm), their start-up hold, and the messages that explain each state live together so that the gate, the view and the Events cannot disagree.
/**
 * Cluster-wide eviction guards: the circuit breaker
 * (`--max-unhealthy-nodes`) and storm detection (`--storm-threshold`, `--storm-window`,
 * `--storm-hold`). Ours, not upstream's: kube-controller-manager's only defences against a mass
 * eviction are the per-zone thresholds and the all-zones stop (`handleDisruption`).
 *
 * While a guard is open, no NoExecute taint is added anywhere and legacy eviction stops. Condition
 * (NoSchedule) taints, the unreachable↔not-ready swap of an existing NoExecute taint and the removal
 * of NoExecute taints go on. A guard can therefore only delay or reduce actions, never add one
 * (docs/node-lifecycle.md, "Cluster-wide eviction guards").
 *
 * Pure: no I/O, no timers. Time is read from the injected clock (epoch **milliseconds**); the
 * controller shell calls {@link EvictionGuards.observe} on every monitor pass and whenever Ready flips reach the zone states,
 * applies the returned transitions (Events, log lines, the `node_collector_eviction_circuit_open`
 * gauge) and asks {@link EvictionGuards.blocksNewNoExecuteTaints} at its single gate point. Prior art
 * the semantics follow: Cluster API MachineHealthCheck `maxUnhealthy` (percentages round down),
 * medik8s NodeHealthCheck's storm delay, Karpenter's node-repair breaker.
 */
import type { Clock } from '../util/clock.js';
import { formatGoDuration } from '../util/duration.js';

/** The two guards, as the `guard` label of `node_collector_eviction_circuit_open` names them. */
export const EVICTION_GUARDS = ['max-unhealthy-nodes', 'storm'] as const;
/** A guard name (also the flag that configures it, `--max-unhealthy-nodes` / `--storm-threshold`). */
export type EvictionGuardName = (typeof EVICTION_GUARDS)[number];

/** Event reason recorded when a guard opens (Warning). */
export const EVENT_EVICTION_CIRCUIT_OPEN = 'EvictionCircuitOpen';
/** Event reason recorded when a guard closes (Warning, so an operator sees it in `kubectl get events`). */
export const EVENT_EVICTION_CIRCUIT_CLOSED = 'EvictionCircuitClosed';

// ---------------------------------------------------------------------------------------------
// Counts and percentages

/** A node count given as an absolute number (`5`) or a share of the nodes (`20%`). */
export type CountOrPercent = { readonly kind: 'count'; readonly count: number } | { readonly kind: 'percent'; readonly percent: number };

/** Thrown by {@link parseCountOrPercent} for text that is neither a count nor a percentage. */
export class CountOrPercentSyntaxError extends Error {
  constructor(text: string, why: string) {
    super(`invalid node count or percentage "${text}": ${why}`);
    this.name = 'CountOrPercentSyntaxError';
  }
}

/**
 * Parses a node count (`5`) or a percentage (`20%`, `12.5%`).
 * @param text the flag's value, trimmed; must not be empty (empty means "guard off" and is handled by the caller).
 * @returns the parsed value.
 * @throws {CountOrPercentSyntaxError} for anything else: a negative number, a fractional count,
 *   a percentage above 100, a missing number, stray characters.
 */
export function parseCountOrPercent(text: string): CountOrPercent {
  const s = text.trim();
  if (s === '') throw new CountOrPercentSyntaxError(text, 'empty');
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(s);
  if (pct) {
    const percent = Number(pct[1]);
    if (!(percent <= 100)) throw new CountOrPercentSyntaxError(text, 'a percentage must be between 0% and 100%');
    return { kind: 'percent', percent };
  }
  if (/^\d+$/.test(s) && Number.isSafeInteger(Number(s))) return { kind: 'count', count: Number(s) };
  throw new CountOrPercentSyntaxError(text, 'use a whole number of nodes (e.g. 10) or a percentage (e.g. 20%)');
}

/** The flag text of a {@link CountOrPercent} (`5`, `20%`). */
export function formatCountOrPercent(v: CountOrPercent): string {
  return v.kind === 'count' ? String(v.count) : `${v.percent}%`;
}

/**
 * The node count a {@link CountOrPercent} stands for in a cluster of `total` nodes. Percentages
 * round **down** (as Cluster API's `maxUnhealthy`, `GetScaledValueFromIntOrPercent(..., false)`):
 * a lower limit opens a guard sooner, which can only delay or reduce actions.
 * @param total nodes that take part in zone disruption (integer >= 0).
 * @returns a whole number of nodes >= 0.
 */
export function resolveCountOrPercent(v: CountOrPercent, total: number): number {
  if (v.kind === 'count') return v.count;
  // The epsilon keeps 30% of 10 at 3 despite 0.3 * 10 = 2.9999999999999996 in floating point.
  return Math.floor((v.percent * total) / 100 + 1e-9);
}

// ---------------------------------------------------------------------------------------------
// The circuit breaker (--max-unhealthy-nodes)

/** Settings of the breaker. */
export interface CircuitBreakerConfig {
  /** `--max-unhealthy-nodes`. */
  readonly maxUnhealthy: CountOrPercent;
  /** How long, in **milliseconds**, the count must stay at or below the close level before the breaker closes (`--node-monitor-grace-period`). */
  readonly closeAfterMs: number;
}

/** The breaker's state between observations. Times are epoch **milliseconds**. */
export interface CircuitBreakerState {
  readonly open: boolean;
  /** When it last opened (set while open). */
  readonly openedAtMs?: number;
  /** While open: since when the count has been at or below the close level without a break. */
  readonly closableSinceMs?: number;
  /**
   * Open only because the controller just started ({@link EvictionGuards.start}): nothing seen since
   * the start has opened it. Cleared (with an `opened` change) once the count itself exceeds the limit.
   */
  readonly startHold?: true;
}

/** The breaker before any observation: closed. */
export const BREAKER_CLOSED: CircuitBreakerState = { open: false };

/**
 * The two levels of the breaker's hysteresis for a cluster of `total` nodes.
 * - `limit`: {@link resolveCountOrPercent} of `--max-unhealthy-nodes`; the breaker opens when more
 *   than `limit` nodes are not Ready.
 * - `closeAt`: `limit − max(1, ceil(limit / 10))`, at least 0; the breaker closes only once at most
 *   `closeAt` nodes have been not Ready for a full `closeAfterMs` (the node monitor grace period).
 * @returns whole node counts, `closeAt < limit` unless `limit` is 0 (then both are 0).
 */
export function breakerLevels(maxUnhealthy: CountOrPercent, total: number): { limit: number; closeAt: number } {
  const limit = resolveCountOrPercent(maxUnhealthy, total);
  return { limit, closeAt: Math.max(0, limit - Math.max(1, Math.ceil(limit / 10))) };
}

/** Result of {@link stepBreaker}. */
export interface BreakerStep {
  readonly state: CircuitBreakerState;
  /** Set when this step opened or closed the breaker. */
  readonly change?: 'opened' | 'closed';
  readonly limit: number;
  readonly closeAt: number;
  /** While open and closable: the epoch ms at which it closes if the count stays at or below `closeAt`. */
  readonly closesAtMs?: number;
}

/**
 * One observation of the breaker. Opens at once when `unhealthy > limit`; closes when the count has
 * been at or below `closeAt` ({@link breakerLevels}) at every observation for `closeAfterMs`. A
 * count between `closeAt` and `limit` neither opens a closed breaker nor starts closing an open one,
 * so a count that wavers around the limit does not flap. A breaker open since the start
 * (`startHold`) closes by the same rule; a count above the limit reports it as `opened` with its own reason.
 * @param prev the state returned by the previous step ({@link BREAKER_CLOSED} at first).
 * @param unhealthy nodes counted not Ready (the controller's stricter, silent-inclusive count).
 * @param total nodes that take part in zone disruption.
 * @param nowMs epoch **milliseconds**.
 * @returns the new state and whether it changed. Never throws.
 */
export function stepBreaker(prev: CircuitBreakerState, unhealthy: number, total: number, nowMs: number, cfg: CircuitBreakerConfig): BreakerStep {
  const { limit, closeAt } = breakerLevels(cfg.maxUnhealthy, total);
  const hold = prev.startHold ? { startHold: true as const } : {};
  if (unhealthy > limit) {
    // A breaker held open since the start now has its own reason: reported as opening.
    if (prev.open) return { state: { open: true, openedAtMs: prev.openedAtMs ?? nowMs }, limit, closeAt, ...(prev.startHold ? { change: 'opened' as const } : {}) };
    return { state: { open: true, openedAtMs: nowMs }, change: 'opened', limit, closeAt };
  }
  if (!prev.open) return { state: BREAKER_CLOSED, limit, closeAt };
  if (unhealthy > closeAt) return { state: { open: true, openedAtMs: prev.openedAtMs ?? nowMs, ...hold }, limit, closeAt };
  const closableSinceMs = prev.closableSinceMs ?? nowMs;
  const closesAtMs = closableSinceMs + cfg.closeAfterMs;
  if (nowMs >= closesAtMs) return { state: BREAKER_CLOSED, change: 'closed', limit, closeAt };
  return { state: { open: true, openedAtMs: prev.openedAtMs ?? nowMs, closableSinceMs, ...hold }, limit, closeAt, closesAtMs };
}

// ---------------------------------------------------------------------------------------------
// Storm detection (--storm-threshold, --storm-window, --storm-hold)

/** Settings of storm detection. */
export interface StormConfig {
  /** `--storm-threshold`: a storm is more nodes than this becoming not Ready within the window. */
  readonly threshold: CountOrPercent;
  /** `--storm-window` in **milliseconds** (> 0). */
  readonly windowMs: number;
  /** `--storm-hold` in **milliseconds** (>= 0): how long tainting stays paused after the storm is over. */
  readonly holdMs: number;
}

/** Storm detection's state between observations. Times are epoch **milliseconds**. */
export interface StormState {
  /** Nodes that were Ready at the last observation; undefined before the first (no baseline yet). */
  readonly ready: ReadonlySet<string> | undefined;
  /** Per node, the last time it was seen turning from Ready to not Ready, kept for one window. */
  readonly becameNotReadyAt: ReadonlyMap<string, number>;
  /** Whether tainting is paused for a storm (during the storm and its hold). */
  readonly open: boolean;
  readonly openedAtMs?: number;
  /** While open: since when the storm has been over (the count within the window at or below the threshold). */
  readonly overSinceMs?: number;
  /**
   * Open only because the controller just started ({@link EvictionGuards.start}): cleared (with an
   * `opened` change) once a storm is seen.
   */
  readonly startHold?: true;
  /**
   * The storm cannot count as over before this time (epoch ms): the start plus one window, the first
   * moment the whole window lies in what this process has seen.
   */
  readonly overNotBeforeMs?: number;
}

/** Storm detection before any observation. */
export const STORM_NONE: StormState = { ready: undefined, becameNotReadyAt: new Map(), open: false };

/** Result of {@link stepStorm}. */
export interface StormStep {
  readonly state: StormState;
  readonly change?: 'opened' | 'closed';
  /** Nodes that became not Ready within the window, now. */
  readonly recent: number;
  /** {@link resolveCountOrPercent} of `--storm-threshold`. */
  readonly threshold: number;
  /** Nodes that became not Ready within the window, sorted by name (at most 10, for messages). */
  readonly recentNodes: readonly string[];
  /** While open: when it closes if no new storm comes (epoch ms). */
  readonly closesAtMs?: number;
  /** When the count within the window next drops because an entry ages out (epoch ms). */
  readonly nextExpiryMs?: number;
}

/**
 * One observation of storm detection. A node *becomes* not Ready when it was Ready at the previous
 * observation and is not now; nodes not Ready at the first observation, and new nodes that were
 * never seen Ready, did not become not Ready in the controller's sight (they count for the breaker,
 * not for the storm). The storm is on while more than `threshold` distinct nodes became not Ready
 * within the last `windowMs` (entry time > now − window); tainting stays paused until it has been
 * over for `holdMs`. A storm that comes back during the hold continues the same pause. A guard open
 * since the start (`startHold`) cannot count the storm as over before `overNotBeforeMs` (start +
 * window); a storm seen then reports it as `opened` with its own reason.
 * @param prev the previous state ({@link STORM_NONE} at first).
 * @param readiness every node that takes part in zone disruption, with whether it counts as Ready.
 * @param nowMs epoch **milliseconds**.
 * @returns the new state (prev is not modified). Never throws.
 */
export function stepStorm(prev: StormState, readiness: ReadonlyMap<string, boolean>, nowMs: number, cfg: StormConfig): StormStep {
  const since = nowMs - cfg.windowMs;
  const became = new Map<string, number>();
  for (const [name, at] of prev.becameNotReadyAt) if (at > since && readiness.has(name)) became.set(name, at);
  const ready = new Set<string>();
  for (const [name, isReady] of readiness) {
    if (isReady) ready.add(name);
    else if (prev.ready?.has(name)) became.set(name, nowMs);
  }
  const threshold = resolveCountOrPercent(cfg.threshold, readiness.size);
  const recent = became.size;
  let nextExpiryMs: number | undefined;
  for (const at of became.values()) if (nextExpiryMs === undefined || at + cfg.windowMs < nextExpiryMs) nextExpiryMs = at + cfg.windowMs;
  const recentNodes = [...became.keys()].sort().slice(0, 10);
  const base = { recent, threshold, recentNodes, ...(nextExpiryMs !== undefined ? { nextExpiryMs } : {}) };
  const inStorm = recent > threshold;
  if (inStorm) {
    const openedAtMs = prev.open ? (prev.openedAtMs ?? nowMs) : nowMs;
    const state: StormState = { ready, becameNotReadyAt: became, open: true, openedAtMs };
    // A guard held open since the start now sees a storm of its own: reported as opening.
    return prev.open && !prev.startHold ? { ...base, state } : { ...base, state, change: 'opened' };
  }
  if (!prev.open) return { ...base, state: { ready, becameNotReadyAt: became, open: false } };
  const hold = prev.startHold ? { startHold: true as const } : {};
  if (prev.overNotBeforeMs !== undefined && nowMs < prev.overNotBeforeMs) {
    // Part of the window lies before the start, unseen: the storm cannot be known to be over yet.
    const state: StormState = { ready, becameNotReadyAt: became, open: true, openedAtMs: prev.openedAtMs ?? nowMs, overNotBeforeMs: prev.overNotBeforeMs, ...hold };
    return { ...base, state, closesAtMs: prev.overNotBeforeMs + cfg.holdMs };
  }
  const overSinceMs = prev.overSinceMs ?? nowMs;
  const closesAtMs = overSinceMs + cfg.holdMs;
  if (nowMs >= closesAtMs) return { ...base, state: { ready, becameNotReadyAt: became, open: false }, change: 'closed' };
  return { ...base, state: { ready, becameNotReadyAt: became, open: true, openedAtMs: prev.openedAtMs ?? nowMs, overSinceMs, ...hold }, closesAtMs };
}

// ---------------------------------------------------------------------------------------------
// Both guards, for the controller shell

/** What the shell passes in on each observation. */
export interface GuardObservation {
  /** Every node that takes part in zone disruption (known, not excluded), with whether it counts as Ready. */
  readonly readiness: ReadonlyMap<string, boolean>;
}

/** The configuration of both guards; an absent guard is off. */
export interface EvictionGuardsConfig {
  readonly breaker?: CircuitBreakerConfig;
  readonly storm?: StormConfig;
  /**
   * The longest gap between two observations, in **milliseconds**, that still counts as watching.
   * The controller observes on every monitor pass and skips passes while it cannot see the cluster;
   * a longer gap means it was blind, and no closing countdown (the breaker's wait, the storm's hold)
   * may span time it did not see: the countdown starts again. Absent: no such rule (pure tests).
   */
  readonly maxObservationGapMs?: number;
}

/** A guard that opened or closed, for an Event, a log line and the gauge. */
export interface GuardTransition {
  readonly guard: EvictionGuardName;
  readonly change: 'opened' | 'closed';
  /** Event reason: {@link EVENT_EVICTION_CIRCUIT_OPEN} or {@link EVENT_EVICTION_CIRCUIT_CLOSED}. */
  readonly reason: string;
  /** One sentence or two for the Event message and the log line. */
  readonly message: string;
  /** Nodes not Ready now, sorted by name: the shell records the Event on one of them. */
  readonly notReadyNodes: readonly string[];
}

/** One guard as `/debug/state`, `status` and `explain` show it. Times are epoch **milliseconds**. */
export interface EvictionGuardView {
  readonly guard: EvictionGuardName;
  readonly open: boolean;
  readonly openedAt?: number;
  /** When it closes if nothing changes (only while it is open and closing). */
  readonly closesAt?: number;
  /** Nodes counted: not Ready (breaker) or became not Ready within the window (storm). */
  readonly count: number;
  /** The level above which the guard opens, in nodes. */
  readonly limit: number;
  /** Nodes taking part in zone disruption. */
  readonly total: number;
  /** The flag settings, as text (`--max-unhealthy-nodes=20% (closes at ...)`). */
  readonly settings: string;
  /** Why it is open, or what it watches while closed. */
  readonly reason: string;
  /** True while it is open only because the controller just started (nothing since has opened it). */
  readonly sinceStart?: true;
}

/**
 * Both guards' state over the injected clock. Pure apart from reading the clock: the shell applies
 * the transitions that {@link observe} returns and consults {@link blocksNewNoExecuteTaints}.
 */
export class EvictionGuards {
  readonly #clock: Pick<Clock, 'now'>;
  readonly #cfg: EvictionGuardsConfig;
  #breaker: CircuitBreakerState = BREAKER_CLOSED;
  #storm: StormState = STORM_NONE;
  #views: EvictionGuardView[] = [];
  #recheckAtMs: number | undefined;
  #lastObservedMs: number | undefined;
  /** Set by {@link start} until the next {@link observe} reports the guards it opened. */
  #announceStart = false;

  /**
   * @param clock the injected clock (epoch ms).
   * @param cfg the guards to run; `{}` runs none (then every method is a cheap no-op).
   */
  constructor(clock: Pick<Clock, 'now'>, cfg: EvictionGuardsConfig) {
    this.#clock = clock;
    this.#cfg = cfg;
  }

  /** Whether any guard is configured (the shell skips building observations otherwise). */
  get enabled(): boolean {
    return this.#cfg.breaker !== undefined || this.#cfg.storm !== undefined;
  }

  /** The configured guards, for initialising the gauge to 0. */
  get configured(): readonly EvictionGuardName[] {
    return EVICTION_GUARDS.filter((g) => (g === 'storm' ? this.#cfg.storm : this.#cfg.breaker) !== undefined);
  }

  /**
   * The controller starts acting (process start, or a standby that became leader): every configured
   * guard begins **open**, as if it had just opened, and closes only by its normal hysteresis over
   * observations made from now on. What was seen before (a storm's baseline and window, the breaker's
   * wait) is forgotten: a restart during a storm must not resume tainting at once, and nothing this
   * process has seen says the storm is over. The breaker closes once at most its close level have
   * been not Ready for its full wait (the node monitor grace period) from the first observation; the
   * storm once its whole window lies after the start (start + `--storm-window`) and it has then been
   * over for `--storm-hold`. Ours, not upstream's (which has no guard): it only delays NoExecute
   * tainting and legacy eviction. A guard that is off stays off. The next {@link observe} reports
   * each guard still held by the start as `opened`, with a message that says so.
   */
  start(): void {
    const now = this.#clock.now();
    this.#lastObservedMs = undefined;
    this.#breaker = this.#cfg.breaker ? { open: true, openedAtMs: now, startHold: true } : BREAKER_CLOSED;
    this.#storm = this.#cfg.storm
      ? { ready: undefined, becameNotReadyAt: new Map(), open: true, openedAtMs: now, startHold: true, overNotBeforeMs: now + this.#cfg.storm.windowMs }
      : STORM_NONE;
    this.#announceStart = this.enabled;
    this.#views = this.configured.map((guard) => ({ guard, open: true, openedAt: now, count: 0, limit: 0, total: 0, settings: '', reason: startReason(guard), sinceStart: true }));
    this.#recheckAtMs = undefined;
  }

  /**
   * Updates both guards from the current node readiness.
   * @returns the guards that opened or closed in this observation (empty when nothing changed).
   */
  observe(obs: GuardObservation): GuardTransition[] {
    const now = this.#clock.now();
    const gap = this.#cfg.maxObservationGapMs;
    if (gap !== undefined && this.#lastObservedMs !== undefined && now - this.#lastObservedMs > gap) {
      // Blind since the last observation: a countdown towards closing restarts now.
      if (this.#breaker.closableSinceMs !== undefined) this.#breaker = { open: true, openedAtMs: this.#breaker.openedAtMs ?? now, ...(this.#breaker.startHold ? { startHold: true as const } : {}) };
      if (this.#storm.overSinceMs !== undefined) this.#storm = { ...this.#storm, overSinceMs: now };
    }
    const announce = this.#announceStart;
    this.#announceStart = false;
    this.#lastObservedMs = now;
    const total = obs.readiness.size;
    const notReady: string[] = [];
    for (const [name, ready] of obs.readiness) if (!ready) notReady.push(name);
    notReady.sort();
    const out: GuardTransition[] = [];
    const views: EvictionGuardView[] = [];
    let recheck: number | undefined;
    const soonest = (t: number | undefined): void => {
      if (t !== undefined && (recheck === undefined || t < recheck)) recheck = t;
    };
    const b = this.#cfg.breaker;
    if (b) {
      const step = stepBreaker(this.#breaker, notReady.length, total, now, b);
      this.#breaker = step.state;
      soonest(step.closesAtMs);
      const settings = `--max-unhealthy-nodes=${formatCountOrPercent(b.maxUnhealthy)}: opens above ${step.limit} of ${total} nodes not Ready, closes after ${step.closeAt} or fewer for ${formatGoDuration(b.closeAfterMs)}`;
      const reason = breakerReason(step, notReady.length, total, b, now);
      views.push(guardView('max-unhealthy-nodes', step.state, step.closesAtMs, { count: notReady.length, limit: step.limit, total, settings, reason }));
      if (step.change) out.push(transition('max-unhealthy-nodes', step.change, reason, notReady));
      else if (announce && step.state.startHold) out.push(transition('max-unhealthy-nodes', 'opened', reason, notReady));
    }
    const s = this.#cfg.storm;
    if (s) {
      const step = stepStorm(this.#storm, obs.readiness, now, s);
      this.#storm = step.state;
      soonest(step.closesAtMs);
      if (step.state.open) soonest(step.nextExpiryMs);
      const settings = `--storm-threshold=${formatCountOrPercent(s.threshold)} --storm-window=${formatGoDuration(s.windowMs)} --storm-hold=${formatGoDuration(s.holdMs)}: a storm is more than ${step.threshold} of ${total} nodes becoming not Ready within ${formatGoDuration(s.windowMs)}`;
      const reason = stormReason(step, total, s, now);
      views.push(guardView('storm', step.state, step.closesAtMs, { count: step.recent, limit: step.threshold, total, settings, reason }));
      if (step.change) out.push(transition('storm', step.change, reason, notReady));
      else if (announce && step.state.startHold) out.push(transition('storm', 'opened', reason, notReady));
    }
    this.#views = views;
    this.#recheckAtMs = recheck;
    return out;
  }

  /**
   * The gate: true while any guard is open. Then no NoExecute taint may be added (a node that has
   * neither NoExecute taint must not get one) and legacy eviction deletes no pod. Swapping an
   * existing not-ready/unreachable NoExecute taint for the other, and removing them, stay allowed.
   */
  blocksNewNoExecuteTaints(): boolean {
    return this.#breaker.open || this.#storm.open;
  }

  /** The open guards, in {@link EVICTION_GUARDS} order. */
  openGuards(): EvictionGuardName[] {
    return this.#views.filter((v) => v.open).map((v) => v.guard);
  }

  /** Whether `guard` is open only because the controller just started ({@link start}). */
  heldSinceStart(guard: EvictionGuardName): boolean {
    return (guard === 'storm' ? this.#storm.startHold : this.#breaker.startHold) === true;
  }

  /**
   * When the shell should observe again even if no node changes: the earliest time a guard can
   * close (its hold ends, or a storm entry ages out of the window). Epoch ms, or undefined.
   */
  recheckAtMs(): number | undefined {
    return this.#recheckAtMs;
  }

  /** The guards as of the last {@link observe}, for `/debug/state`. */
  view(): EvictionGuardView[] {
    return this.#views.map((v) => ({ ...v }));
  }
}

function guardView(
  guard: EvictionGuardName,
  state: { readonly open: boolean; readonly openedAtMs?: number; readonly startHold?: true },
  closesAtMs: number | undefined,
  rest: Pick<EvictionGuardView, 'count' | 'limit' | 'total' | 'settings' | 'reason'>,
): EvictionGuardView {
  return {
    guard,
    open: state.open,
    ...(state.openedAtMs !== undefined ? { openedAt: state.openedAtMs } : {}),
    ...(closesAtMs !== undefined ? { closesAt: closesAtMs } : {}),
    ...rest,
    ...(state.startHold ? { sinceStart: true as const } : {}),
  };
}

/** Why a guard is open before its first observation since the start. */
function startReason(guard: EvictionGuardName): string {
  return `Eviction guard ${guard} open because the controller just started: ${WHAT_STOPS} until it has watched the nodes long enough to close by its own rule.`;
}

function transition(guard: EvictionGuardName, change: 'opened' | 'closed', message: string, notReady: readonly string[]): GuardTransition {
  return {
    guard,
    change,
    reason: change === 'opened' ? EVENT_EVICTION_CIRCUIT_OPEN : EVENT_EVICTION_CIRCUIT_CLOSED,
    message,
    notReadyNodes: notReady,
  };
}

const WHAT_STOPS =
  'no NoExecute taint is added anywhere and legacy eviction stops (NoSchedule condition taints, the unreachable/not-ready swap and taint removals go on)';

function pct(n: number, total: number): string {
  return total > 0 ? ` (${Math.round((100 * n) / total)}%)` : '';
}

function breakerReason(step: BreakerStep, unhealthy: number, total: number, cfg: CircuitBreakerConfig, nowMs: number): string {
  const flag = `--max-unhealthy-nodes=${formatCountOrPercent(cfg.maxUnhealthy)}`;
  if (step.change === 'closed') {
    return (
      `Eviction circuit closed: ${unhealthy} of ${total} nodes are not Ready, and at most ${step.closeAt} have been for ${formatGoDuration(cfg.closeAfterMs)} ` +
      `(${flag}, limit ${step.limit}); NoExecute tainting resumes at each zone's rate.`
    );
  }
  if (!step.state.open) return `Closed: ${unhealthy} of ${total} nodes are not Ready${pct(unhealthy, total)}, at most ${step.limit} allowed (${flag}).`;
  const closing =
    step.closesAtMs !== undefined
      ? `it closes at ${new Date(step.closesAtMs).toISOString()} (in ${formatGoDuration(Math.max(0, step.closesAtMs - nowMs))}) if at most ${step.closeAt} stay not Ready`
      : `it closes once at most ${step.closeAt} nodes have been not Ready for ${formatGoDuration(cfg.closeAfterMs)}`;
  if (step.state.startHold) {
    return (
      `Eviction circuit open because the controller just started (${flag}): what it saw before the start is gone, so ${WHAT_STOPS} ` +
      `until it has seen at most ${step.closeAt} of ${total} nodes not Ready (now ${unhealthy}) for ${formatGoDuration(cfg.closeAfterMs)}; ${closing}.`
    );
  }
  return (
    `Eviction circuit open: ${unhealthy} of ${total} nodes are not Ready${pct(unhealthy, total)}, more than ${flag} allows (${step.limit}). ` +
    `So many nodes down at once points to a cluster-wide problem (network, control plane, a bad rollout) rather than independent failures, so ${WHAT_STOPS}; ${closing}.`
  );
}

function stormReason(step: StormStep, total: number, cfg: StormConfig, nowMs: number): string {
  const flags = `--storm-threshold=${formatCountOrPercent(cfg.threshold)}, --storm-window=${formatGoDuration(cfg.windowMs)}`;
  const names = step.recentNodes.join(', ') + (step.recent > step.recentNodes.length ? `, and ${step.recent - step.recentNodes.length} more` : '');
  if (step.change === 'closed') {
    return `Node storm over for --storm-hold=${formatGoDuration(cfg.holdMs)}: ${step.recent} of ${total} nodes became not Ready within the last ${formatGoDuration(cfg.windowMs)} (${flags}, threshold ${step.threshold}); NoExecute tainting resumes at each zone's rate.`;
  }
  if (!step.state.open) {
    return `No storm: ${step.recent} of ${total} nodes became not Ready within the last ${formatGoDuration(cfg.windowMs)}, a storm is more than ${step.threshold} (${flags}).`;
  }
  const until =
    step.closesAtMs !== undefined
      ? step.state.overSinceMs !== undefined
        ? `the storm is over since ${new Date(step.state.overSinceMs).toISOString()}; tainting resumes at ${new Date(step.closesAtMs).toISOString()} (in ${formatGoDuration(Math.max(0, step.closesAtMs - nowMs))}) unless it comes back`
        : `tainting resumes at ${new Date(step.closesAtMs).toISOString()} at the earliest (in ${formatGoDuration(Math.max(0, step.closesAtMs - nowMs))}) unless a storm comes`
      : `tainting resumes once the storm has been over for --storm-hold=${formatGoDuration(cfg.holdMs)}`;
  if (step.state.startHold) {
    return (
      `Node storm guard open because the controller just started (${flags}, --storm-hold=${formatGoDuration(cfg.holdMs)}): a storm seen before the start is not known to be over, so ${WHAT_STOPS} ` +
      `until a whole window has been watched since the start and no storm seen for the hold (${step.recent} of ${total} nodes became not Ready within it so far, a storm is more than ${step.threshold}); ${until}.`
    );
  }
  return (
    `Node storm: ${step.recent} of ${total} nodes became not Ready within the last ${formatGoDuration(cfg.windowMs)}, more than the threshold ${step.threshold} (${flags})` +
    `${names ? `: ${names}` : ''}. Many nodes failing together points to a partition or a control-plane problem rather than independent failures, so ${WHAT_STOPS}; ${until}.`
  );
}

/**
 * The guards' configuration from the parsed flags (src/cli/flags.ts `ControllerConfig`).
 * @param flags `maxUnhealthyNodes` / `stormThreshold` (undefined = that guard off), `stormWindow`,
 *   `stormHold`, `nodeMonitorGracePeriod` and `nodeMonitorPeriod` in **milliseconds**.
 * @returns the config; neither `breaker` nor `storm` when both guards are off. Never throws.
 */
export function evictionGuardsConfig(flags: {
  readonly maxUnhealthyNodes: CountOrPercent | undefined;
  readonly stormThreshold: CountOrPercent | undefined;
  readonly stormWindow: number;
  readonly stormHold: number;
  readonly nodeMonitorGracePeriod: number;
  readonly nodeMonitorPeriod: number;
}): EvictionGuardsConfig {
  return {
    // A monitor pass waits at most one period for its health syncs: passes come at most two periods
    // apart while the controller sees the cluster; three leave room for a busy event loop.
    maxObservationGapMs: 3 * flags.nodeMonitorPeriod,
    ...(flags.maxUnhealthyNodes ? { breaker: { maxUnhealthy: flags.maxUnhealthyNodes, closeAfterMs: flags.nodeMonitorGracePeriod } } : {}),
    ...(flags.stormThreshold ? { storm: { threshold: flags.stormThreshold, windowMs: flags.stormWindow, holdMs: flags.stormHold } } : {}),
  };
}
