// Why this file is over 500 lines: the demo command runs a whole scenario (control plane, fleet, cluster watch, six steps, summary); split candidates: ClusterWatch and the step functions.
/**
 * `npm run demo` (this package's `demo` command): the controller doing its real job on the
 * embedded default, with no cluster of the user's own.
 *
 * 1. Brings up the local control plane (`scripts/control-plane.sh up`, streaming its progress; a
 *    first run builds kube-apiserver) unless it is already up.
 * 2. Starts a simulated kubelet fleet (packages/sim/src/fleet.ts; default 3 zones × 10 nodes, 5 pods a node:
 *    plain, short-toleration, tolerate-forever, DaemonSet and PVC-backed pods) and the controller
 *    itself in this process (`startController`) with compressed timings: 6 s grace period, 1 s
 *    monitor period, 1 node/s tainting rate, no leader election, scoped to the fleet's nodes.
 * 3. Plays the scenario: power loss of one node (Unknown, NoExecute taint, pods evicted at their
 *    toleration times); its recovery (taints removed, pending deletions cancelled); most of one
 *    zone failing (tainting paused, and why); a dead node with a volume getting the
 *    out-of-service taint (force-delete and force-detach); MemoryPressure (NoSchedule taint); node
 *    pressure from a leak (the simulated kubelet's eviction manager evicts the BestEffort pod).
 * 4. Shows a live view on a TTY (plain timestamped lines otherwise or with `--plain`) built from
 *    the cluster (node and Event watches) and the controller's `view()`s, then a summary with the
 *    kubectl commands that show the same from the cluster.
 *
 * Ctrl-C or a failed step tears everything down: the controller stops, the fleet is deleted, and
 * the control plane is stopped if (and only if) the demo started it. `--keep` leaves the cluster
 * and the fleet's objects for exploring with kubectl; `--wait` keeps the controller and the
 * kubelets running after the scenario until Ctrl-C, for `status` and `explain`.
 *
 * Not upstream: kube-controller-manager has no demo.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PatchStrategy, setHeaderOptions, type V1PodStatus } from '@kubernetes/client-node';
import yargs from 'yargs';
import { Fleet } from './fleet.js';
import { silentLogger } from './log.js';
import { buildPod, FLEET_LABEL } from './objects.js';
import { FAULT_ANNOTATION } from './evictionmanager.js';
import { hostAddress } from './kubeletserver.js';
import { evictionConfigFromFlags } from '../../../src/kubelet/thresholds.js';
import { startListWatch, type ListWatchHandle, type WatchEventType } from './watch.js';
import { describeError, isConflict, loadKubeConfig, makeClients, type KubeClients } from '../../../src/kube/client.js';
import { getCondition, podKey, taintToWire, toMillis, toNode, toPod, type Node, type Pod, type Taint } from '../../../src/kube/objects.js';
import { createLogger } from '../../../src/log/logger.js';
import { TAINT_NODE_MEMORY_PRESSURE, TAINT_NODE_OUT_OF_SERVICE, TAINT_NODE_UNREACHABLE } from '../../../src/kube/taints.js';
import { firstToleratingToleration } from '../../../src/tainteviction/tolerations.js';
import { TAINT_MANAGER_EVICTION_REASON } from '../../../src/tainteviction/events.js';
import { realClock } from '../../../src/util/clock.js';
import { PolicyV1Api } from '@kubernetes/client-node';
import { NODE_AFFINITY_ENFORCER_NAME } from '../../../src/nodeaffinity/controller.js';
import { REQUIRED_DURING_EXECUTION_ANNOTATION } from '../../../src/nodeaffinity/rule.js';
import {
  DEMO_STEPS,
  diffControllerView,
  diffNodes,
  formatLogLine,
  kubectlCommands,
  renderLiveView,
  renderSummary,
  tPlus,
  type DemoStep,
  type DemoStepSummary,
  type DemoSummary,
  type LogEntry,
  type LogKind,
  type ObservedNode,
} from './demo-view.js';
import { FlagError, parseControllerFlags } from '../../../src/cli/flags.js';
import { formatReadableQuantity } from '../../../src/cli/explain-pressure.js';
import { zoneName } from '../../../src/explain/state.js';
import { rfc3339 } from '../../../src/util/format.js';
import { formatTaint } from '../../../src/kube/taints.js';
import { startController, type RunningController } from '../../../src/cli/run.js';

/** The controller's compressed timings for the demo. Durations in milliseconds, rates in nodes per second. */
export const DEMO_TIMINGS = {
  nodeMonitorGracePeriodMs: 6000,
  nodeMonitorPeriodMs: 1000,
  nodeEvictionRate: 1,
  /** Kubelet Lease renewal (a quarter of the grace period or less, as kubelet's 10 s of 40 s). */
  leaseRenewIntervalMs: 1000,
  /** Lease `leaseDurationSeconds`, seconds. */
  leaseDurationSeconds: 6,
  /** tolerationSeconds of the fleet's short-toleration pods, seconds. */
  tolerationSeconds: 10,
  /** tolerationSeconds of the extra pod put on the power-loss victim, seconds. */
  secondTolerationSeconds: 20,
} as const;

/** The demo's options (parsed flags). */
export interface DemoOptions {
  zones: number;
  nodesPerZone: number;
  podsPerNode: number;
  steps: DemoStep[];
  plain: boolean;
  keep: boolean;
  wait: boolean;
  prefix: string;
  summaryJson: string | undefined;
  logFile: string;
}

/** Where the demo writes; injectable for tests. */
export interface DemoIo {
  /** Writes text as is. */
  write: (text: string) => void;
  /** True for a terminal that can redraw in place. */
  isTTY: boolean;
  columns: () => number;
  rows: () => number;
}

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const UNREACHABLE_NO_EXECUTE = `${TAINT_NODE_UNREACHABLE}:NoExecute`;
const MEMORY_PRESSURE_NO_SCHEDULE = `${TAINT_NODE_MEMORY_PRESSURE}:NoSchedule`;
/** Tolerations at most this long (seconds) are waited for in the power-loss step. */
const WAIT_FOR_TOLERATIONS_UP_TO_S = 60;
/** Event reasons the live log shows (node or pod events of the fleet). */
const LOGGED_REASONS: ReadonlySet<string> = new Set([
  TAINT_MANAGER_EVICTION_REASON,
  'ZoneEvictionPaused',
  'ZoneEvictionSlowed',
  'AllZonesDisrupted',
  'AllZonesRecovered',
  'DeletingAllPods',
  'NodeControllerEviction',
  'RemovingNode',
  'ForceDeletedOutOfService',
  'ForceDeletedOrphan',
  'ForceDeletedPodOutOfService',
  'ForceDeletedOrphanPod',
  'ForceDetachedOutOfService',
  'ForceDetachedTimeout',
  // The simulated kubelet's node-pressure eviction (node-pressure step).
  'EvictionThresholdMet',
  'Evicted',
]);

// ---------------------------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------------------------

const DEMO_USAGE = `$0 [options]

Brings up a local Kubernetes control plane (scripts/control-plane.sh; the first run builds
kube-apiserver), a simulated fleet of kubelets and this controller, and plays node failures in
compressed time: ${DEMO_STEPS.join(', ')}. Needs no cluster of your own.`;

/**
 * Parses the demo's flags.
 * @returns the options, or undefined after printing `--help`.
 * @throws {FlagError} for unknown flags, bad numbers, unknown steps, or a fleet too small for a step.
 */
export async function parseDemoFlags(argv: string[], write: (t: string) => void = (t) => void process.stdout.write(t)): Promise<DemoOptions | undefined> {
  const parser = yargs(argv)
    .scriptName('npm run demo --')
    .usage(DEMO_USAGE)
    .parserConfiguration({ 'camel-case-expansion': false, 'boolean-negation': false })
    .strict()
    .exitProcess(false)
    .version(false)
    .help(false)
    .wrap(110)
    .fail((msg: string | undefined, err: Error | undefined) => {
      throw new FlagError((msg ?? err?.message ?? 'invalid arguments').replace(/\s+/g, ' ').trim());
    })
    .options({
      help: { alias: 'h', type: 'boolean', describe: 'show this help' },
      zones: { type: 'number', default: 3, describe: 'number of zones' },
      'nodes-per-zone': { type: 'number', default: 10, describe: 'nodes in each zone (zone-outage needs at least 4)' },
      'pods-per-node': { type: 'number', default: 5, describe: 'pods on each node; 5 gives every node one of each kind' },
      scenario: { type: 'string', default: 'all', describe: `comma-separated steps, or all: ${DEMO_STEPS.join(',')} (always run in this order)` },
      plain: { type: 'boolean', default: false, describe: 'plain timestamped lines instead of the live view (the default without a TTY)' },
      keep: { type: 'boolean', default: false, describe: 'leave the control plane and the fleet\'s objects for exploring with kubectl' },
      wait: { type: 'boolean', default: false, describe: 'after the scenario, keep the controller and the kubelets running until Ctrl-C (try status/explain)' },
      prefix: { type: 'string', default: 'demo', describe: 'fleet prefix: node names PREFIX-ZONE-I, namespace nlc-PREFIX' },
      'summary-json': { type: 'string', describe: 'also write the summary as JSON to this file' },
      'log-file': { type: 'string', describe: 'controller log file (default: $TMPDIR/node-lifecycle-controller-demo-PREFIX.log)' },
    });
  const p = await parser.parseAsync();
  if (p.help) {
    let text = '';
    parser.showHelp((s) => (text = s));
    write(`${text}\n`);
    return undefined;
  }
  if (p._.length > 0) throw new FlagError(`demo takes no arguments, got ${p._.join(' ')}`);
  const int = (flag: string, v: number, min: number, max: number): number => {
    if (!Number.isInteger(v) || v < min || v > max) throw new FlagError(`--${flag}: must be an integer from ${min} to ${max}, got ${String(v)}`, flag);
    return v;
  };
  const zones = int('zones', p.zones, 1, 26);
  const nodesPerZone = int('nodes-per-zone', p['nodes-per-zone'], 1, 200);
  const podsPerNode = int('pods-per-node', p['pods-per-node'], 0, 110);
  const steps = parseScenario(p.scenario);
  if (steps.includes('recover') && !steps.includes('power-loss')) throw new FlagError('--scenario: recover needs power-loss (it revives that node)', 'scenario');
  if (steps.includes('zone-outage') && nodesPerZone < 4) throw new FlagError('--scenario zone-outage needs --nodes-per-zone >= 4 (at least 3 dead nodes and more than half the zone)', 'scenario');
  if (steps.includes('out-of-service') && podsPerNode < 1) throw new FlagError('--scenario out-of-service needs pods (one with a volume): use --pods-per-node 5', 'scenario');
  if (steps.length > zones * nodesPerZone) throw new FlagError('the fleet is too small for the scenario: add nodes', 'nodes-per-zone');
  if (!/^[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?$/.test(p.prefix)) throw new FlagError(`--prefix: "${p.prefix}" must be a DNS label of at most 20 characters`, 'prefix');
  return {
    zones,
    nodesPerZone,
    podsPerNode,
    steps,
    plain: p.plain,
    keep: p.keep,
    wait: p.wait,
    prefix: p.prefix,
    summaryJson: p['summary-json'],
    logFile: p['log-file'] ?? join(tmpdir(), `node-lifecycle-controller-demo-${p.prefix}.log`),
  };
}

/**
 * Parses `--scenario`: `all`, or a comma-separated list of {@link DEMO_STEPS}.
 * @returns the steps in canonical order, without duplicates.
 * @throws {FlagError} for an unknown or empty step list.
 */
export function parseScenario(text: string): DemoStep[] {
  if (text.trim() === 'all') return [...DEMO_STEPS];
  const words = text.split(',').map((w) => w.trim()).filter((w) => w !== '');
  if (words.length === 0) throw new FlagError('--scenario: no steps given', 'scenario');
  for (const w of words) {
    if (!(DEMO_STEPS as readonly string[]).includes(w)) throw new FlagError(`--scenario: unknown step "${w}"; steps are ${DEMO_STEPS.join(', ')} (or all)`, 'scenario');
  }
  return DEMO_STEPS.filter((s) => words.includes(s));
}

// ---------------------------------------------------------------------------------------------
// The local control plane
// ---------------------------------------------------------------------------------------------

/**
 * The control-plane script, found next to the sources (src/cli) or the build (dist/src/cli).
 * @returns its absolute path.
 * @throws {Error} when neither place has it (the program is not run from a checkout).
 */
export function controlPlaneScript(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const p = resolvePath(here, up, 'scripts/control-plane.sh');
    if (existsSync(p)) return p;
  }
  throw new Error('scripts/control-plane.sh not found: run the demo from a checkout of node-lifecycle-controller');
}

/** Runs `bash control-plane.sh ARGS`, passing each output line to `onLine`. Resolves with the exit code and stdout. */
function controlPlane(args: string[], onLine: (line: string) => void): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [controlPlaneScript(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    createInterface({ input: child.stderr }).on('line', onLine);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

// ---------------------------------------------------------------------------------------------
// Watching the cluster
// ---------------------------------------------------------------------------------------------

/** An Event of the fleet as the demo saw it. `atMs` is when this process saw it (epoch ms). */
interface SeenEvent {
  atMs: number;
  uid: string;
  reason: string;
  type: string;
  kind: string;
  name: string;
  namespace: string;
  message: string;
  count: number;
}

/** Thrown when the demo is interrupted (Ctrl-C). */
class Interrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

/**
 * Watches the fleet's nodes and Events, keeps the first time each taint was seen, and turns
 * changes into log lines.
 */
class ClusterWatch {
  readonly nodes = new Map<string, Node>();
  readonly observed = new Map<string, ObservedNode>();
  /** `node|taint` → epoch ms when it was first seen (reset when the taint goes away). */
  readonly taintSince = new Map<string, number>();
  readonly events: SeenEvent[] = [];
  readonly #counts = new Map<string, number>();
  readonly #handles: ListWatchHandle[] = [];
  readonly #prefix: string;
  readonly #sinceMs: number;
  readonly #log: (kind: LogKind, text: string, atMs?: number) => void;
  /**
   * No log lines until the scenario starts: setup noise (the controller removing the
   * `not-ready:NoSchedule` taint that admission puts on every new node, registrations) is not news.
   */
  muted = true;

  constructor(
    private readonly clients: KubeClients,
    prefix: string,
    private readonly namespace: string,
    sinceMs: number,
    log: (kind: LogKind, text: string, atMs?: number) => void,
  ) {
    this.#prefix = prefix;
    this.#sinceMs = sinceMs;
    this.#log = log;
  }

  async start(): Promise<void> {
    const { core, kubeConfig } = this.clients;
    const labelSelector = `${FLEET_LABEL}=${this.#prefix}`;
    const common = { kubeConfig, clock: realClock, logger: silentLogger };
    this.#handles.push(
      startListWatch({
        ...common,
        name: 'demo-nodes',
        path: '/api/v1/nodes',
        labelSelector,
        list: async () => {
          const l = await core.listNode({ labelSelector });
          return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
        },
        onSync: (items) => {
          for (const raw of items) this.#onNode('ADDED', raw);
        },
        onEvent: (type, raw) => this.#onNode(type, raw),
      }),
    );
    for (const ns of ['default', this.namespace]) {
      this.#handles.push(
        startListWatch({
          ...common,
          name: `demo-events-${ns}`,
          path: `/api/v1/namespaces/${ns}/events`,
          list: async () => {
            const l = await core.listNamespacedEvent({ namespace: ns });
            return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
          },
          onSync: (items) => {
            for (const raw of items) this.#onEvent(raw);
          },
          onEvent: (type, raw) => {
            if (type !== 'DELETED') this.#onEvent(raw);
          },
        }),
      );
    }
    await Promise.all(this.#handles.map((h) => h.synced));
  }

  stop(): void {
    for (const h of this.#handles.splice(0)) h.stop();
  }

  /** When `taint` (`key=value:effect`) was first seen on `node` in its current stretch, or undefined. */
  taintSeenAt(node: string, taint: string): number | undefined {
    return this.taintSince.get(`${node}|${taint}`);
  }

  #onNode(type: WatchEventType, raw: unknown): void {
    const node = toNode(raw);
    if (!node) return;
    const now = Date.now();
    const before = new Map(this.observed);
    if (type === 'DELETED') {
      this.nodes.delete(node.name);
      this.observed.delete(node.name);
      return;
    }
    this.nodes.set(node.name, node);
    const obs: ObservedNode = {
      name: node.name,
      zone: node.labels['topology.kubernetes.io/zone'] ?? '',
      ready: getCondition(node.conditions, 'Ready')?.status,
      taints: node.taints.map((t) => formatTaint(t)).sort(),
    };
    this.observed.set(node.name, obs);
    for (const t of obs.taints) if (!this.taintSince.has(`${node.name}|${t}`)) this.taintSince.set(`${node.name}|${t}`, now);
    for (const key of [...this.taintSince.keys()]) {
      const [n, t] = key.split('|') as [string, string];
      if (n === node.name && !obs.taints.includes(t)) this.taintSince.delete(key);
    }
    if (!this.muted) for (const e of diffNodes(before, this.observed, now)) this.#log(e.kind, e.text, now);
  }

  #onEvent(raw: unknown): void {
    const e = raw as {
      metadata?: { uid?: string };
      involvedObject?: { kind?: string; name?: string; namespace?: string };
      reason?: string;
      message?: string;
      type?: string;
      count?: number;
      lastTimestamp?: unknown;
      firstTimestamp?: unknown;
      eventTime?: unknown;
    };
    const name = e.involvedObject?.name ?? '';
    if (!name.startsWith(`${this.#prefix}-`)) return;
    // Events are second-precision; anything older than the demo is left over from an earlier run.
    const last = toMillis(e.lastTimestamp) ?? toMillis(e.eventTime) ?? toMillis(e.firstTimestamp) ?? 0;
    if (last < this.#sinceMs - 1000) return;
    const uid = e.metadata?.uid ?? '';
    const count = e.count ?? 1;
    if ((this.#counts.get(uid) ?? 0) >= count) return;
    this.#counts.set(uid, count);
    const seen: SeenEvent = {
      atMs: Date.now(),
      uid,
      reason: e.reason ?? '',
      type: e.type ?? '',
      kind: e.involvedObject?.kind ?? '',
      name,
      namespace: e.involvedObject?.namespace ?? '',
      message: e.message ?? '',
      count,
    };
    this.events.push(seen);
    const logged = LOGGED_REASONS.has(seen.reason) || (seen.reason === 'NodeNotReady' && seen.kind === 'Node');
    if (logged && !this.muted) {
      const obj = seen.kind === 'Pod' ? `pod ${seen.namespace}/${seen.name}` : `${seen.kind.toLowerCase()} ${seen.name}`;
      this.#log(seen.type === 'Warning' ? 'zone' : 'event', `event ${seen.type} ${seen.reason} ${obj}: ${seen.message}${count > 1 ? ` (×${count})` : ''}`, seen.atMs);
    }
  }

  /** Events with `reason` seen at or after `sinceMs`, optionally for one object name. */
  eventsFor(reason: string, sinceMs: number, name?: string): SeenEvent[] {
    return this.events.filter((e) => e.reason === reason && e.atMs >= sinceMs && (name === undefined || e.name === name));
  }
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

/** Everything a step needs. */
interface Ctx {
  opts: DemoOptions;
  clients: KubeClients;
  fleet: Fleet;
  controller: RunningController;
  watch: ClusterWatch;
  namespace: string;
  originMs: number;
  abort: AbortSignal;
  log: (kind: LogKind, text: string, atMs?: number) => void;
  setPhase: (text: string) => void;
  /** Nodes some step already acted on. */
  used: Set<string>;
}

/** A step failure with a one-line reason. */
class StepError extends Error {}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Interrupted());
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new Interrupted());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Polls `probe` every 100 ms until it returns a value other than undefined/false. @throws {StepError} after `timeoutMs`. */
async function waitUntil<T>(ctx: Ctx, what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new StepError(`${what}: not seen within ${(timeoutMs / 1000).toFixed(0)} s`);
    await sleep(100, ctx.abort);
  }
}

async function podsOnNode(ctx: Ctx, node: string): Promise<Pod[]> {
  const l = await ctx.clients.core.listNamespacedPod({ namespace: ctx.namespace, fieldSelector: `spec.nodeName=${node}` });
  return l.items.map((p) => toPod(p)).filter((p): p is Pod => p !== undefined);
}

/** Adds a taint to a node with an optimistic-concurrency merge patch, as `kubectl taint` would. */
async function addNodeTaint(clients: KubeClients, name: string, taint: Taint): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const node = toNode(await clients.core.readNode({ name }));
    if (!node) throw new Error(`node ${name}: malformed object`);
    if (node.taints.some((t) => t.key === taint.key && t.effect === taint.effect)) return;
    try {
      await clients.core.patchNode(
        { name, body: { metadata: { resourceVersion: node.resourceVersion }, spec: { taints: [...node.taints, taint].map(taintToWire) } } },
        MERGE_PATCH,
      );
      return;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  throw new Error(`node ${name}: could not add taint ${formatTaint(taint)} after 10 conflicts`);
}

function newStep(step: DemoStep, ctx: Ctx, nodes: string[]): DemoStepSummary {
  const t = (Date.now() - ctx.originMs) / 1000;
  for (const n of nodes) ctx.used.add(n);
  return { step, ok: false, error: null, tStart: t, tEnd: t, nodes, lines: [], taints: [], evictions: [], pending: [], pausedReason: null, forceDeletedPods: [], detachedVolumeAttachments: [] };
}

const tSec = (ctx: Ctx, atMs: number): number => Math.round((atMs - ctx.originMs) / 100) / 10;

/** Picks an unused, live node, preferring `zoneIndex`, optionally one that satisfies `accept`. */
async function pickNode(ctx: Ctx, zoneIndex: number, accept?: (node: string) => boolean | Promise<boolean>): Promise<string | undefined> {
  const zones = ctx.fleet.zones();
  const order = [...zones.slice(zoneIndex % zones.length), ...zones.slice(0, zoneIndex % zones.length)];
  for (const z of order) {
    for (const n of ctx.fleet.nodesInZone(z)) {
      if (ctx.used.has(n) || !ctx.fleet.isAlive(n)) continue;
      if (!accept || (await accept(n))) return n;
    }
  }
  return undefined;
}

async function stepPowerLoss(ctx: Ctx, s: DemoStepSummary, victim: string): Promise<void> {
  const grace = DEMO_TIMINGS.nodeMonitorGracePeriodMs;
  ctx.setPhase(`step power-loss: ${victim} loses power`);
  ctx.log('step', `power-loss: ${victim} loses power — its kubelet stops renewing its Lease and posting status`);
  const pods = await podsOnNode(ctx, victim);
  const killedAt = Date.now();
  ctx.fleet.killNode(victim);
  const unknownAt = await waitUntil(ctx, `${victim} Ready=Unknown`, () => ctx.watch.observed.get(victim)?.ready === 'Unknown' && Date.now(), grace + 15_000);
  const taintedAt = await waitUntil(ctx, `taint ${UNREACHABLE_NO_EXECUTE} on ${victim}`, () => ctx.watch.taintSeenAt(victim, UNREACHABLE_NO_EXECUTE), 15_000);
  const node = ctx.watch.nodes.get(victim);
  const taint = node?.taints.find((t) => t.key === TAINT_NODE_UNREACHABLE && t.effect === 'NoExecute');
  s.lines.push(
    `${victim} lost power at ${tPlus(killedAt, ctx.originMs)}; Ready=Unknown ${((unknownAt - killedAt) / 1000).toFixed(1)} s later (grace period ${grace / 1000} s after its last heartbeat); ` +
      `tainted ${UNREACHABLE_NO_EXECUTE} at ${tPlus(taintedAt, ctx.originMs)}${taint?.timeAdded !== undefined ? ` (timeAdded ${rfc3339(taint.timeAdded)})` : ''}`,
  );
  for (const t of ctx.watch.observed.get(victim)?.taints ?? []) s.taints.push({ node: victim, taint: t, t: tSec(ctx, ctx.watch.taintSeenAt(victim, t) ?? taintedAt) });

  const probe: Taint = { key: TAINT_NODE_UNREACHABLE, effect: 'NoExecute' };
  const short: { pod: Pod; seconds: number }[] = [];
  const long: { pod: Pod; seconds: number }[] = [];
  const forever: Pod[] = [];
  for (const p of pods) {
    const tol = firstToleratingToleration(probe, p.tolerations, ctx.controller.config.featureGates.TaintTolerationComparisonOperators);
    if (tol && tol.tolerationSeconds === undefined) forever.push(p);
    else {
      const seconds = Math.max(0, tol?.tolerationSeconds ?? 0);
      (seconds <= WAIT_FOR_TOLERATIONS_UP_TO_S ? short : long).push({ pod: p, seconds });
    }
  }
  const longest = Math.max(0, ...short.map((x) => x.seconds));
  ctx.setPhase(`step power-loss: waiting for pods with tolerations up to ${longest} s to be evicted`);
  for (const { pod, seconds } of short.sort((a, b) => a.seconds - b.seconds)) {
    const marked = await waitUntil(
      ctx,
      `eviction of pod ${podKey(pod)} (toleration ${seconds} s)`,
      () => ctx.watch.eventsFor(TAINT_MANAGER_EVICTION_REASON, taintedAt - 2000, pod.name).find((e) => e.message.startsWith('Marking for deletion')),
      (seconds + 15) * 1000,
    );
    const after = (marked.atMs - taintedAt) / 1000;
    s.evictions.push({ pod: podKey(pod), tolerationSeconds: seconds, t: tSec(ctx, marked.atMs), afterTaintSeconds: Math.round(after * 10) / 10 });
    const due = taint?.timeAdded !== undefined ? ` (due timeAdded + ${seconds} s = ${tPlus(taint.timeAdded + seconds * 1000, ctx.originMs)})` : '';
    s.lines.push(`pod ${podKey(pod)} (tolerates ${seconds} s) marked for deletion at ${tPlus(marked.atMs, ctx.originMs)}, ${after.toFixed(1)} s after the taint was seen${due}`);
  }
  const pending = (ctx.controller.taintEviction?.view() ?? []).filter((p) => p.node === victim && p.state === 'scheduled');
  for (const p of pending) s.pending.push({ pod: p.pod, deadline: rfc3339(p.deadlineMs) });
  if (long.length > 0) {
    s.lines.push(
      `pending with longer tolerations: ${long
        .map(({ pod, seconds }) => {
          const d = pending.find((p) => p.pod === podKey(pod));
          return `${podKey(pod)} (${seconds} s${d ? `, due ${rfc3339(d.deadlineMs)}` : ''})`;
        })
        .join(', ')}`,
    );
  }
  if (forever.length > 0) s.lines.push(`never evicted (tolerate ${TAINT_NODE_UNREACHABLE} forever): ${forever.map((p) => podKey(p)).join(', ')}`);
}

async function stepRecover(ctx: Ctx, s: DemoStepSummary, victim: string): Promise<void> {
  ctx.setPhase(`step recover: ${victim} comes back`);
  ctx.log('step', `recover: ${victim} powers back on — Ready=True, its Lease renewed again`);
  const pendingBefore = (ctx.controller.taintEviction?.view() ?? []).filter((p) => p.node === victim).map((p) => p.pod);
  const revivedAt = Date.now();
  await ctx.fleet.reviveNode(victim);
  const readyAt = await waitUntil(ctx, `${victim} Ready=True`, () => ctx.watch.observed.get(victim)?.ready === 'True' && Date.now(), 15_000);
  const clearedAt = await waitUntil(
    ctx,
    `NoExecute taints removed from ${victim}`,
    () => !(ctx.watch.observed.get(victim)?.taints ?? []).some((t) => t.endsWith(':NoExecute')) && Date.now(),
    15_000,
  );
  s.lines.push(`${victim} powered on at ${tPlus(revivedAt, ctx.originMs)}; Ready=True at ${tPlus(readyAt, ctx.originMs)}; NoExecute taints removed at ${tPlus(clearedAt, ctx.originMs)}`);
  await waitUntil(ctx, `pending deletions on ${victim} cancelled`, () => !(ctx.controller.taintEviction?.view() ?? []).some((p) => p.node === victim), 10_000);
  const cancelled = new Set<string>();
  if (pendingBefore.length > 0) {
    await waitUntil(
      ctx,
      `"Cancelling deletion" events for ${victim}'s pods`,
      () => {
        for (const e of ctx.watch.eventsFor(TAINT_MANAGER_EVICTION_REASON, revivedAt - 1000)) if (e.message.startsWith('Cancelling deletion')) cancelled.add(`${e.namespace}/${e.name}`);
        return pendingBefore.every((p) => cancelled.has(p));
      },
      10_000,
    ).catch(() => undefined);
    s.lines.push(`pending deletions cancelled (the taint is gone): ${pendingBefore.join(', ')}`);
  }
  // The pods marked for deletion while the node was dead finish terminating now that a kubelet
  // runs again to confirm it.
  const goneAt = await waitUntil(
    ctx,
    `terminating pods on ${victim} deleted by its kubelet`,
    async () => !(await podsOnNode(ctx, victim)).some((p) => p.deletionTimestamp !== undefined) && Date.now(),
    15_000,
  );
  s.lines.push(`pods marked for deletion while it was dead were removed by its kubelet at ${tPlus(goneAt, ctx.originMs)}`);
  s.lines.push(`final taints on ${victim}: ${(ctx.watch.observed.get(victim)?.taints ?? []).join(', ') || 'none'}`);
}

async function stepZoneOutage(ctx: Ctx, s: DemoStepSummary, zone: string): Promise<void> {
  const grace = DEMO_TIMINGS.nodeMonitorGracePeriodMs;
  const all = ctx.fleet.nodesInZone(zone);
  const alreadyDead = all.filter((n) => !ctx.fleet.isAlive(n)).length;
  const want = Math.min(all.length - 1, Math.max(3, Math.ceil(0.7 * all.length)));
  const victims = all.filter((n) => ctx.fleet.isAlive(n)).slice(0, Math.max(0, want - alreadyDead));
  s.nodes = victims;
  for (const v of victims) ctx.used.add(v);
  ctx.setPhase(`step zone-outage: ${victims.length} of ${all.length} nodes in ${zone} lose power`);
  ctx.log('step', `zone-outage: ${victims.length} of ${all.length} nodes in ${zone} lose power at once — more than the unhealthy-zone threshold (55 %)`);
  const killedAt = Date.now();
  for (const v of victims) ctx.fleet.killNode(v);
  const zoneView = () => ctx.controller.nodeLifecycle?.view().zones.find((z) => zoneName(z.zoneLabel).endsWith(`:${zone}`));
  const paused = await waitUntil(ctx, `zone ${zone} paused`, () => zoneView()?.pausedReason !== undefined && zoneView(), grace + 15_000);
  const pausedAt = Date.now();
  s.pausedReason = paused.pausedReason ?? null;
  await waitUntil(ctx, `all ${victims.length} nodes Ready=Unknown`, () => victims.every((v) => ctx.watch.observed.get(v)?.ready === 'Unknown'), grace + 15_000);
  const event = await waitUntil(ctx, 'a ZoneEvictionPaused event', () => ctx.watch.eventsFor('ZoneEvictionPaused', killedAt - 1000)[0], 15_000);
  s.lines.push(`${victims.length} of ${all.length} nodes in ${zone} lost power at ${tPlus(killedAt, ctx.originMs)}; zone ${zoneName(paused.zoneLabel)} went ${paused.state} at ${tPlus(pausedAt, ctx.originMs)}, tainting rate ${paused.rate} node/s`);
  s.lines.push(`why (Warning ZoneEvictionPaused on node ${event.name}): ${event.message}`);
  ctx.setPhase(`step zone-outage: tainting paused — watching for ${grace / 1000} s that no NoExecute taint lands`);
  await sleep(grace, ctx.abort);
  const tainted = victims.filter((v) => (ctx.watch.observed.get(v)?.taints ?? []).some((t) => t.endsWith(':NoExecute')));
  s.lines.push(
    tainted.length === 0
      ? `no NoExecute taint on any of the ${victims.length} dead nodes (their pods stay put): the controller assumes a zone-wide problem such as a network partition`
      : `NoExecute taints appeared on ${tainted.join(', ')} although the zone is paused`,
  );
  for (const v of victims) for (const t of ctx.watch.observed.get(v)?.taints ?? []) s.taints.push({ node: v, taint: t, t: tSec(ctx, ctx.watch.taintSeenAt(v, t) ?? Date.now()) });
  ctx.setPhase(`step zone-outage: ${zone} comes back`);
  ctx.log('action', `the ${victims.length} nodes in ${zone} power back on`);
  const revivedAt = Date.now();
  await Promise.all(victims.map((v) => ctx.fleet.reviveNode(v)));
  await waitUntil(ctx, `all nodes of ${zone} Ready`, () => victims.every((v) => ctx.watch.observed.get(v)?.ready === 'True'), 20_000);
  const resumedAt = await waitUntil(ctx, `zone ${zone} Normal again`, () => zoneView()?.state === 'Normal' && zoneView()?.pausedReason === undefined && Date.now(), 20_000);
  s.lines.push(`powered on at ${tPlus(revivedAt, ctx.originMs)}; zone Normal and tainting resumed at ${tPlus(resumedAt, ctx.originMs)}`);
  if (tainted.length > 0) throw new StepError(`NoExecute taints appeared in paused zone ${zone}: ${tainted.join(', ')}`);
}

async function stepOutOfService(ctx: Ctx, s: DemoStepSummary): Promise<void> {
  const grace = DEMO_TIMINGS.nodeMonitorGracePeriodMs;
  const zones = ctx.fleet.zones();
  const withVolume = (n: string): boolean => ctx.fleet.podsOn(n).some((p) => p.includes('-pvc-'));
  const victim = await pickNode(ctx, Math.min(1, zones.length - 1), withVolume);
  if (!victim) throw new StepError('no unused node has a pod with a volume (use --pods-per-node 5)');
  s.nodes = [victim];
  ctx.used.add(victim);
  const vaList = await ctx.clients.storage.listVolumeAttachment({ labelSelector: `${FLEET_LABEL}=${ctx.opts.prefix}` });
  const vas = vaList.items.filter((va) => va.spec?.nodeName === victim).map((va) => va.metadata?.name ?? '');
  ctx.setPhase(`step out-of-service: ${victim} dies holding ${vas.length} volume(s)`);
  ctx.log('step', `out-of-service: ${victim} (with ${vas.length} attached volume(s)) loses power for good`);
  const killedAt = Date.now();
  ctx.fleet.killNode(victim);
  await waitUntil(ctx, `${victim} Ready=Unknown`, () => ctx.watch.observed.get(victim)?.ready === 'Unknown', grace + 15_000);
  const taintedAt = await waitUntil(ctx, `taint ${UNREACHABLE_NO_EXECUTE} on ${victim}`, () => ctx.watch.taintSeenAt(victim, UNREACHABLE_NO_EXECUTE), 15_000);
  const podsBefore = await podsOnNode(ctx, victim);
  s.lines.push(`${victim} lost power at ${tPlus(killedAt, ctx.originMs)} and was tainted ${UNREACHABLE_NO_EXECUTE} at ${tPlus(taintedAt, ctx.originMs)}; its pods cannot terminate (no kubelet), its volumes stay attached`);
  const oos: Taint = { key: TAINT_NODE_OUT_OF_SERVICE, value: 'nodeshutdown', effect: 'NoExecute', timeAdded: Date.now() };
  ctx.log('action', `administrator: kubectl taint nodes ${victim} ${TAINT_NODE_OUT_OF_SERVICE}=nodeshutdown:NoExecute`);
  await addNodeTaint(ctx.clients, victim, oos);
  const oosAt = Date.now();
  ctx.setPhase(`step out-of-service: waiting for force-delete and force-detach on ${victim}`);
  const podsGoneAt = await waitUntil(ctx, `pods on ${victim} force-deleted`, async () => (await podsOnNode(ctx, victim)).length === 0 && Date.now(), 30_000);
  const detachedAt = await waitUntil(
    ctx,
    `VolumeAttachments of ${victim} deleted`,
    async () => {
      const l = await ctx.clients.storage.listVolumeAttachment({ labelSelector: `${FLEET_LABEL}=${ctx.opts.prefix}` });
      return !l.items.some((va) => va.spec?.nodeName === victim) && Date.now();
    },
    30_000,
  );
  await sleep(500, ctx.abort); // let the last events arrive
  s.forceDeletedPods = [...new Set(ctx.watch.eventsFor('ForceDeletedOutOfService', oosAt - 1000).map((e) => `${e.namespace}/${e.name}`))].sort();
  s.detachedVolumeAttachments = vas;
  const detachEvents = ctx.watch.eventsFor('ForceDetachedOutOfService', oosAt - 1000, victim);
  s.lines.push(`out-of-service taint added at ${tPlus(oosAt, ctx.originMs)}`);
  s.lines.push(
    `all ${podsBefore.length} pods gone at ${tPlus(podsGoneAt, ctx.originMs)} (${s.forceDeletedPods.length} force-deleted by PodGC: ForceDeletedOutOfService); ` +
      `${vas.length} VolumeAttachment(s) force-detached by ${tPlus(detachedAt, ctx.originMs)} (${detachEvents.length} ForceDetachedOutOfService event(s))`,
  );
}

async function stepMemoryPressure(ctx: Ctx, s: DemoStepSummary): Promise<void> {
  const node = await pickNode(ctx, 0);
  if (!node) throw new StepError('no unused live node left for memory-pressure');
  s.nodes = [node];
  ctx.used.add(node);
  ctx.setPhase(`step memory-pressure: ${node} reports MemoryPressure`);
  ctx.log('step', `memory-pressure: ${node}'s kubelet reports MemoryPressure=True`);
  const setAt = Date.now();
  await ctx.fleet.setCondition(node, 'MemoryPressure', true);
  const taintedAt = await waitUntil(ctx, `taint ${MEMORY_PRESSURE_NO_SCHEDULE} on ${node}`, () => ctx.watch.taintSeenAt(node, MEMORY_PRESSURE_NO_SCHEDULE), 15_000);
  s.taints.push({ node, taint: MEMORY_PRESSURE_NO_SCHEDULE, t: tSec(ctx, taintedAt) });
  s.lines.push(
    `${node} reported MemoryPressure=True at ${tPlus(setAt, ctx.originMs)}; tainted ${MEMORY_PRESSURE_NO_SCHEDULE} at ${tPlus(taintedAt, ctx.originMs)} ` +
      '(new pods are not scheduled there; running pods stay: NoSchedule does not evict)',
  );
}

/** The simulated kubelets' eviction settings in the demo (kubelet flag names): a 1Gi hard threshold, a 10 s transition period. */
const NODE_PRESSURE_DEMO_FLAGS = { 'eviction-hard': 'memory.available<1Gi', 'eviction-pressure-transition-period': '10s' } as const;

/**
 * The node-pressure step (issue 20, docs/node-pressure.md): a BestEffort pod leaks 2Gi/s on a node
 * that also runs a Guaranteed pod. The simulated kubelet's eviction manager reports MemoryPressure;
 * our controller taints `memory-pressure:NoSchedule`; the kubelet evicts the BestEffort pod (Failed,
 * reason Evicted) while the Guaranteed pod stays; after the transition period the condition and the
 * taint clear.
 */
async function stepNodePressure(ctx: Ctx, s: DemoStepSummary): Promise<void> {
  const node = await pickNode(ctx, 0);
  if (!node) throw new StepError('no unused live node left for node-pressure');
  s.nodes = [node];
  ctx.used.add(node);
  const { clients, namespace } = ctx;
  const leaker = `${node}-leak`;
  const guaranteed = `${node}-guaranteed`;
  const create = async (name: string, change: (p: ReturnType<typeof buildPod>) => void): Promise<void> => {
    const body = buildPod({ prefix: ctx.opts.prefix, namespace, name, nodeName: node, kind: 'plain', tolerationSeconds: 0 });
    change(body);
    await clients.core.createNamespacedPod({ namespace, body });
  };
  await create(guaranteed, (p) => {
    const c = p.spec?.containers[0];
    if (c) c.resources = { requests: { cpu: '100m', memory: '512Mi' }, limits: { cpu: '100m', memory: '512Mi' } };
  });
  await create(leaker, (p) => void (p.metadata = { ...p.metadata, annotations: { ...p.metadata?.annotations, [FAULT_ANNOTATION]: 'memory-leak=2Gi' } }));
  const phase = async (name: string): Promise<V1PodStatus | undefined> => (await clients.core.readNamespacedPod({ name, namespace })).status;
  for (const name of [guaranteed, leaker]) await waitUntil(ctx, `pod ${name} Running`, async () => (await phase(name))?.phase === 'Running', 15_000);
  const manager = ctx.fleet.nodePressure.manager(node);
  const leakAt = Date.now();
  ctx.setPhase(`step node-pressure: ${leaker} (BestEffort) leaks 2Gi/s on ${node}; kubelet hard threshold memory.available<1Gi`);
  ctx.log('step', `node-pressure: ${leaker} (BestEffort) starts leaking 2Gi/s; ${guaranteed} (Guaranteed) runs beside it`);
  const memoryPressure = (): string | undefined => getCondition(ctx.watch.nodes.get(node)?.conditions ?? [], 'MemoryPressure')?.status;
  const polledAt = await waitUntil(ctx, `MemoryPressure=True on ${node}`, () => memoryPressure() === 'True' && Date.now(), 40_000);
  const taintedAt = await waitUntil(ctx, `taint ${MEMORY_PRESSURE_NO_SCHEDULE} on ${node}`, () => ctx.watch.taintSeenAt(node, MEMORY_PRESSURE_NO_SCHEDULE), 15_000);
  // The condition is polled every 100 ms, the taint is timed by the watch itself; the taint cannot
  // come before the condition, so a taint seen first bounds when the condition arrived.
  const pressureAt = Math.min(polledAt, taintedAt);
  ctx.log('zone', `node-pressure: the kubelet reports MemoryPressure=True on ${node}`, pressureAt);
  s.taints.push({ node, taint: MEMORY_PRESSURE_NO_SCHEDULE, t: tSec(ctx, taintedAt) });
  let ranking: string | undefined;
  const evicted = await waitUntil(ctx, `${leaker} Failed/Evicted`, async () => {
    const victim = manager.lastResult()?.choice;
    if (victim?.victim && ranking === undefined) {
      // Readable units (`20.0Gi`), not the ranking's Go-form bytes (`21502351115`).
      const usage = (r: (typeof victim.ranking)[number]): string => (r.usage === undefined ? 'no stats'
        : `usage ${formatReadableQuantity(r.resource, r.usage)} ${r.usage > r.request ? '>' : '<='} request ${formatReadableQuantity(r.resource, r.request)}`);
      ranking = victim.ranking.slice(0, 3).map((r) => `${r.rank}. ${r.pod.metadata?.name ?? ''} (${r.qosClass}, ${usage(r)})`).join(', ');
    }
    const st = await phase(leaker);
    return st?.phase === 'Failed' && st.reason === 'Evicted' ? { atMs: Date.now(), message: st.message ?? '' } : undefined;
  }, 40_000);
  const guaranteedPhase = (await phase(guaranteed))?.phase;
  if (guaranteedPhase !== 'Running') throw new StepError(`${guaranteed} (Guaranteed) is ${guaranteedPhase ?? 'gone'}, expected Running`);
  ctx.log('step', `node-pressure: the kubelet evicted ${leaker}: ${evicted.message.trim()}`, evicted.atMs);
  ctx.setPhase(`step node-pressure: memory recovered; MemoryPressure is held for the ${NODE_PRESSURE_DEMO_FLAGS['eviction-pressure-transition-period']} transition period`);
  const clearedAt = await waitUntil(ctx, `MemoryPressure=False on ${node}`, () => memoryPressure() === 'False' && Date.now(), 40_000);
  const untaintedAt = await waitUntil(ctx, `taint ${MEMORY_PRESSURE_NO_SCHEDULE} removed from ${node}`, () => ctx.watch.taintSeenAt(node, MEMORY_PRESSURE_NO_SCHEDULE) === undefined && Date.now(), 15_000);
  s.lines.push(
    `${leaker} (BestEffort) started leaking 2Gi/s at ${tPlus(leakAt, ctx.originMs)}; the kubelet reported MemoryPressure=True at ${tPlus(pressureAt, ctx.originMs)} (memory.available < 1Gi)`,
    `our controller tainted ${MEMORY_PRESSURE_NO_SCHEDULE} at ${tPlus(taintedAt, ctx.originMs)}`,
    `the kubelet's ranking: ${ranking ?? '(not captured)'}; it evicted ${leaker} at ${tPlus(evicted.atMs, ctx.originMs)} (phase Failed, reason Evicted); ${guaranteed} (Guaranteed) stays Running`,
    `after the ${NODE_PRESSURE_DEMO_FLAGS['eviction-pressure-transition-period']} transition period MemoryPressure=False at ${tPlus(clearedAt, ctx.originMs)}; taint removed at ${tPlus(untaintedAt, ctx.originMs)}`,
  );
  if (ctx.fleet.kubeletEndpoint(node)) s.lines.push(`the kubelet's Summary API: kubectl get --raw /api/v1/nodes/${node}/proxy/stats/summary (with --wait or --keep)`);
}

/** The node label the node-affinity step's rule selects (`on` matches, `off` breaks the rule). */
const AFFINITY_DEMO_LABEL = 'nlc.demo/affinity';
/** `--affinity-violation-grace` in the demo, milliseconds. */
const AFFINITY_DEMO_GRACE_MS = 3000;

/**
 * The node-affinity step (issue 19, docs/node-affinity.md): a pod whose during-execution rule needs
 * `nlc.demo/affinity=on` runs on a node so labelled, guarded by a PodDisruptionBudget at its limit.
 * The node is relabelled `off`: after the grace the enforcer evicts through the Eviction API, the
 * PDB refuses (EvictionBlockedByPDB); a replica comes up on another matching node, the budget
 * allows one disruption, and the next attempt goes through. No kube-controller-manager runs here, so
 * the step plays the disruption controller: it writes the PDB's status, which is all the eviction
 * subresource reads.
 */
async function stepNodeAffinity(ctx: Ctx, s: DemoStepSummary): Promise<void> {
  const node = await pickNode(ctx, 1);
  if (!node) throw new StepError('no unused live node left for node-affinity');
  ctx.used.add(node);
  const spare = await pickNode(ctx, 2);
  if (!spare) throw new StepError('no second unused live node for the node-affinity replica');
  ctx.used.add(spare);
  s.nodes = [node, spare];
  const { clients, namespace } = ctx;
  const policy = clients.kubeConfig.makeApiClient(PolicyV1Api);
  const app = `${ctx.opts.prefix}-affinity`;
  for (const n of [node, spare]) await clients.core.patchNode({ name: n, body: { metadata: { labels: { [AFFINITY_DEMO_LABEL]: 'on' } } } }, MERGE_PATCH);
  const rule = JSON.stringify({ nodeSelectorTerms: [{ matchExpressions: [{ key: AFFINITY_DEMO_LABEL, operator: 'In', values: ['on'] }] }] });
  const createPod = async (name: string, on: string): Promise<void> => {
    const body = buildPod({ prefix: ctx.opts.prefix, namespace, name, nodeName: on, kind: 'plain', tolerationSeconds: 0 });
    body.metadata = { ...body.metadata, labels: { ...body.metadata?.labels, app }, annotations: { ...body.metadata?.annotations, [REQUIRED_DURING_EXECUTION_ANNOTATION]: rule } };
    await clients.core.createNamespacedPod({ namespace, body });
    await waitUntil(ctx, `pod ${name} Running`, async () => (await clients.core.readNamespacedPod({ name, namespace })).status?.phase === 'Running', 15_000);
  };
  const setBudget = async (allowed: number, healthy: number): Promise<void> => {
    const pdb = await policy.readNamespacedPodDisruptionBudget({ name: app, namespace });
    const status = { observedGeneration: pdb.metadata?.generation ?? 1, disruptionsAllowed: allowed, currentHealthy: healthy, desiredHealthy: 1, expectedPods: healthy, disruptedPods: pdb.status?.disruptedPods ?? {} };
    await policy.replaceNamespacedPodDisruptionBudgetStatus({ name: app, namespace, body: { ...pdb, status } });
  };
  const first = `${node}-affinity`;
  const key = `${namespace}/${first}`;
  ctx.setPhase(`step node-affinity: ${first} on ${node}, guarded by PDB ${app} (minAvailable 1)`);
  // A --keep run may have left the budget behind.
  await policy.deleteNamespacedPodDisruptionBudget({ name: app, namespace }).catch(() => undefined);
  await policy.createNamespacedPodDisruptionBudget({ namespace, body: { metadata: { name: app }, spec: { minAvailable: 1, selector: { matchLabels: { app } } } } });
  await createPod(first, node);
  await setBudget(0, 1);
  ctx.log('step', `node-affinity: ${first} needs ${AFFINITY_DEMO_LABEL}=on during execution; PDB ${app} allows 0 disruptions`);
  const enforcer = ctx.controller.nodeAffinity;
  if (!enforcer) throw new StepError('the node-affinity-enforcer is not running');
  const violation = () => enforcer.view().violations.find((v) => v.pod === key);

  const relabelAt = Date.now();
  await clients.core.patchNode({ name: node, body: { metadata: { labels: { [AFFINITY_DEMO_LABEL]: 'off' } } } }, MERGE_PATCH);
  ctx.log('step', `node-affinity: ${node} relabelled ${AFFINITY_DEMO_LABEL}=off — the rule no longer matches`);
  ctx.setPhase(`step node-affinity: grace ${AFFINITY_DEMO_GRACE_MS / 1000}s, then an eviction the PDB should refuse`);
  const blocked = await waitUntil(ctx, `EvictionBlockedByPDB for ${first}`, () => {
    const v = violation();
    return v && v.state === 'blocked-by-pdb' ? v : undefined;
  }, AFFINITY_DEMO_GRACE_MS + 15_000);
  const blockedAt = Date.now();
  ctx.log('step', `node-affinity: eviction of ${first} refused by the PDB (${blocked.reason}); backing off`);

  const replica = `${spare}-affinity`;
  ctx.setPhase(`step node-affinity: a replica comes up on ${spare}; the PDB allows one disruption`);
  await createPod(replica, spare);
  await setBudget(1, 2);
  ctx.log('step', `node-affinity: replica ${replica} Running on ${spare}; PDB ${app} now allows 1 disruption`);
  const evictedAt = await waitUntil(ctx, `${first} evicted`, async () => {
    if (violation()?.state === 'evicted') return Date.now();
    try {
      const p = await clients.core.readNamespacedPod({ name: first, namespace });
      return p.metadata?.deletionTimestamp ? Date.now() : undefined;
    } catch (err) {
      return (err as { code?: number }).code === 404 ? Date.now() : undefined;
    }
  }, 60_000);
  s.lines.push(
    `${node} relabelled ${AFFINITY_DEMO_LABEL}=off at ${tPlus(relabelAt, ctx.originMs)}; after the ${AFFINITY_DEMO_GRACE_MS / 1000}s grace the eviction of ${first} was refused by PDB ${app} (EvictionBlockedByPDB, by ${tPlus(blockedAt, ctx.originMs)})`,
    `replica ${replica} came up on ${spare}; the next attempt evicted ${first} through the Eviction API at ${tPlus(evictedAt, ctx.originMs)} (EvictedForNodeAffinity)`,
  );
}

/**
 * Runs the `demo` command.
 * @param argv the arguments after `demo`.
 * @param io output; default the process's stdout.
 * @returns exit code: 0 when every step passed (or `--help`), 1 when setup or a step failed, 130
 *   when interrupted by Ctrl-C (SIGINT) or SIGTERM. Teardown runs in every case.
 * @throws {FlagError} for bad flags (exit code 2 in main.ts).
 */
export async function runDemoCommand(argv: string[], io?: DemoIo): Promise<number> {
  const out: DemoIo = io ?? {
    write: (t) => void process.stdout.write(t),
    isTTY: process.stdout.isTTY === true,
    columns: () => process.stdout.columns || 100,
    rows: () => process.stdout.rows || 40,
  };
  const opts = await parseDemoFlags(argv, out.write);
  if (!opts) return 0;
  const live = out.isTTY && !opts.plain;
  const startedAt = Date.now();
  const namespace = `nlc-${opts.prefix}`;
  const logEntries: LogEntry[] = [];
  let originMs = startedAt;
  let phase = 'starting';
  const println = (text: string): void => out.write(`${text}\n`);
  const log = (kind: LogKind, text: string, atMs = Date.now()): void => {
    const e: LogEntry = { atMs, kind, text };
    logEntries.push(e);
    if (logEntries.length > 1000) logEntries.splice(0, logEntries.length - 1000);
    if (!live) println(formatLogLine(e, originMs));
  };

  const abort = new AbortController();
  let interrupted = false;
  let waitingForExit = false;
  let signals = 0;
  const onSignal = (): void => {
    signals++;
    if (signals > 1) {
      out.write('\nsecond interrupt: exiting without cleanup\n');
      process.exit(130);
    }
    if (!waitingForExit) interrupted = true;
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let startedCluster = false;
  let kubeconfig = '';
  let fleet: Fleet | undefined;
  let controller: RunningController | undefined;
  let watch: ClusterWatch | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const steps: DemoStepSummary[] = [];
  let error: string | null = null;
  let scenarioStarted: number | undefined;
  let prevView: Parameters<typeof diffControllerView>[1] | undefined;

  const render = (): void => {
    if (!live || !controller) return;
    const view = controller.nodeLifecycle?.view();
    const lines = renderLiveView(
      {
        title: `node-lifecycle-controller demo · ${opts.zones} zone(s) × ${opts.nodesPerZone} nodes · ${opts.podsPerNode} pods/node · http://127.0.0.1:${controller.port}`,
        phase,
        originMs,
        nowMs: Date.now(),
        zones: view?.zones ?? [],
        nodes: [...(watch?.observed.values() ?? [])],
        pending: controller.taintEviction?.view() ?? [],
        log: logEntries,
      },
      { columns: out.columns(), rows: out.rows(), color: true },
    );
    out.write(`\x1b[H${lines.map((l) => `${l}\x1b[K`).join('\n')}\x1b[J`);
  };
  const tick = (): void => {
    if (!controller) return;
    const now = Date.now();
    const current = { zones: controller.nodeLifecycle?.view().zones ?? [], pending: controller.taintEviction?.view() ?? [] };
    for (const e of diffControllerView(prevView, current, now)) log(e.kind, e.text, now);
    prevView = current;
    render();
  };

  try {
    // 1. Control plane.
    println(`node-lifecycle-controller demo: ${opts.steps.join(', ')}`);
    const status = await controlPlane(['status'], () => undefined);
    if (status.code !== 0) {
      println('[demo] starting the local control plane (scripts/control-plane.sh up; the first run installs packages and builds kube-apiserver: several minutes)');
      const up = await controlPlane(['up'], (line) => println(line));
      if (up.code !== 0) throw new Error('scripts/control-plane.sh up failed (see the lines above)');
      startedCluster = true;
    } else {
      println('[demo] local control plane already up; it stays up afterwards');
    }
    if (abort.signal.aborted) throw new Interrupted();
    kubeconfig = (await controlPlane(['kubeconfig'], () => undefined)).stdout.trim();
    const clients = makeClients(loadKubeConfig(kubeconfig));

    // 2. Fleet (after removing a fleet a previous --keep run left behind).
    const leftovers = await clients.core.listNode({ labelSelector: `${FLEET_LABEL}=${opts.prefix}` });
    if (leftovers.items.length > 0) {
      println(`[demo] removing the previous demo fleet "${opts.prefix}" (${leftovers.items.length} nodes)`);
      await new Fleet({ clients, prefix: opts.prefix, namespace, zones: opts.zones, nodesPerZone: opts.nodesPerZone, podsPerNode: 0 }).cleanup();
    }
    fleet = new Fleet({
      clients,
      prefix: opts.prefix,
      namespace,
      zones: opts.zones,
      nodesPerZone: opts.nodesPerZone,
      podsPerNode: opts.podsPerNode,
      leaseRenewIntervalMs: DEMO_TIMINGS.leaseRenewIntervalMs,
      leaseDurationSeconds: DEMO_TIMINGS.leaseDurationSeconds,
      nodeStatusUpdateFrequencyMs: 60_000,
      tolerationSeconds: DEMO_TIMINGS.tolerationSeconds,
      onProgress: (m) => println(`[demo] fleet: ${m}`),
      ...(opts.steps.includes('node-pressure')
        ? {
            eviction: evictionConfigFromFlags(NODE_PRESSURE_DEMO_FLAGS),
            // The Summary API behind the node proxy needs a non-loopback address (packages/sim/src/kubeletserver.ts); without one the step still runs.
            kubeletServer: hostAddress() !== undefined,
          }
        : {}),
    });
    println(`[demo] creating ${opts.zones * opts.nodesPerZone} simulated nodes and ${opts.zones * opts.nodesPerZone * opts.podsPerNode} pods (namespace ${namespace})`);
    await fleet.start();
    if (abort.signal.aborted) throw new Interrupted();
    const firstZone = fleet.zones()[0] as string;
    const powerVictim = opts.steps.includes('power-loss') ? fleet.nodesInZone(firstZone)[0] : undefined;
    if (powerVictim) {
      // A second short toleration on the power-loss victim, so evictions at two different times show.
      const name = `${powerVictim}-tol${DEMO_TIMINGS.secondTolerationSeconds}`;
      await clients.core.createNamespacedPod({
        namespace,
        body: buildPod({ prefix: opts.prefix, namespace, name, nodeName: powerVictim, kind: 'tolerationSeconds', tolerationSeconds: DEMO_TIMINGS.secondTolerationSeconds }),
      });
      const probe = (): Promise<boolean> => clients.core.readNamespacedPod({ name, namespace }).then((p) => p.status?.phase === 'Running');
      for (let i = 0; i < 100 && !(await probe()); i++) await sleep(100, abort.signal);
    }

    // 3. Controller, in this process.
    const config = await parseControllerFlags(
      [
        `--kubeconfig=${kubeconfig}`,
        `--node-selector=${FLEET_LABEL}=${opts.prefix}`,
        // The demo reads the plain port without a token; no HTTPS port (it would take 10267 on every interface).
        '--metrics-bind-address=127.0.0.1:0',
        '--secure-port=0',
        '--leader-elect=false',
        `--node-monitor-grace-period=${DEMO_TIMINGS.nodeMonitorGracePeriodMs}ms`,
        `--node-monitor-period=${DEMO_TIMINGS.nodeMonitorPeriodMs}ms`,
        `--node-eviction-rate=${DEMO_TIMINGS.nodeEvictionRate}`,
        ...(opts.steps.includes('node-affinity')
          ? [`--controllers=*,${NODE_AFFINITY_ENFORCER_NAME}`, `--affinity-violation-grace=${AFFINITY_DEMO_GRACE_MS}ms`, '--affinity-eviction-rate=1']
          : []),
        '--log-level=info',
      ],
      {},
    );
    const logger = createLogger({ level: 'info', format: 'json', destination: createWriteStream(opts.logFile, { flags: 'w' }) });
    println(`[demo] starting the controller in this process (grace ${DEMO_TIMINGS.nodeMonitorGracePeriodMs / 1000}s, monitor ${DEMO_TIMINGS.nodeMonitorPeriodMs / 1000}s, rate ${DEMO_TIMINGS.nodeEvictionRate} node/s); log: ${opts.logFile}`);
    controller = await startController(config, { log: logger });
    await controller.started;
    println(`[demo] controller up: /metrics and /debug/state on http://127.0.0.1:${controller.port}`);
    watch = new ClusterWatch(clients, opts.prefix, namespace, startedAt, log);
    await watch.start();
    const running = controller;
    await waitUntilPlain(abort.signal, 'every zone Normal', () => {
      const zones = running.nodeLifecycle?.view().zones ?? [];
      return zones.length === opts.zones && zones.every((z) => z.state === 'Normal');
    }, 30_000);

    // 4. Scenario.
    scenarioStarted = Date.now();
    originMs = scenarioStarted;
    if (live) out.write('\x1b[?25l\x1b[2J\x1b[H');
    watch.muted = false;
    log('info', `controller ready; scenario starts (T+0 = ${rfc3339(originMs)})`);
    tick();
    ticker = setInterval(tick, live ? 250 : 200);
    const ctx: Ctx = {
      opts,
      clients,
      fleet,
      controller,
      watch,
      namespace,
      originMs,
      abort: abort.signal,
      log,
      setPhase: (t) => {
        phase = t;
      },
      used: new Set(),
    };
    const zones = fleet.zones();
    const total = opts.steps.length;
    for (const [i, step] of opts.steps.entries()) {
      const numbered = (t: string): void => ctx.setPhase(`[${i + 1}/${total}] ${t}`);
      const stepCtx: Ctx = { ...ctx, setPhase: numbered };
      const s = newStep(step, ctx, step === 'power-loss' || step === 'recover' ? [powerVictim as string] : []);
      steps.push(s);
      try {
        if (step === 'power-loss') await stepPowerLoss(stepCtx, s, powerVictim as string);
        else if (step === 'recover') await stepRecover(stepCtx, s, powerVictim as string);
        else if (step === 'zone-outage') await stepZoneOutage(stepCtx, s, zones[zones.length - 1] as string);
        else if (step === 'out-of-service') await stepOutOfService(stepCtx, s);
        else if (step === 'memory-pressure') await stepMemoryPressure(stepCtx, s);
        else if (step === 'node-pressure') await stepNodePressure(stepCtx, s);
        else await stepNodeAffinity(stepCtx, s);
        s.ok = true;
        log('ok', `${step}: done`);
      } catch (err) {
        if (err instanceof Interrupted) throw err;
        s.error = describeError(err);
        throw err;
      } finally {
        s.tEnd = tSec(ctx, Date.now());
      }
    }
    phase = 'scenario finished';
    tick();
    if (opts.wait) {
      waitingForExit = true;
      phase = `scenario finished; controller and kubelets keep running — Ctrl-C to finish`;
      log('info', `try: node-lifecycle-controller status --endpoint http://127.0.0.1:${controller.port}`);
      log('info', `     node-lifecycle-controller explain node ${steps[0]?.nodes[0] ?? fleet.nodeNames()[0] ?? ''} --endpoint http://127.0.0.1:${controller.port}`);
      await new Promise<void>((r) => (abort.signal.aborted ? r() : abort.signal.addEventListener('abort', () => r(), { once: true })));
    }
  } catch (err) {
    if (err instanceof Interrupted || (abort.signal.aborted && !waitingForExit)) {
      interrupted = true;
      error = 'interrupted';
    } else {
      error = describeError(err);
      log('error', `failed: ${error}`);
    }
  } finally {
    if (ticker) clearInterval(ticker);
    if (live && controller && scenarioStarted !== undefined) {
      tick();
      out.write('\x1b[?25h\n\n');
    }
  }

  // Teardown: always, in reverse order of setup.
  println('[demo] tearing down' + (opts.keep ? ' (--keep: the control plane and the fleet\'s objects stay)' : ''));
  watch?.stop();
  const endpoint = controller ? `http://127.0.0.1:${controller.port}` : null;
  if (controller) await Promise.race([controller.stop(), new Promise((r) => setTimeout(r, 5000).unref())]);
  if (fleet) {
    try {
      if (opts.keep) await fleet.stop();
      else await fleet.cleanup();
    } catch (err) {
      println(`[demo] fleet cleanup failed: ${describeError(err)}`);
    }
  }
  if (startedCluster && !opts.keep) {
    println('[demo] stopping the control plane the demo started');
    await controlPlane(['down'], (line) => println(line)).catch((err: unknown) => println(`[demo] control-plane down failed: ${describeError(err)}`));
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);

  const ok = error === null && steps.every((s) => s.ok) && steps.length === opts.steps.length;
  const summary: DemoSummary = {
    ok,
    error,
    interrupted,
    prefix: opts.prefix,
    namespace,
    kubeconfig,
    controllerEndpoint: endpoint,
    controllerLog: opts.logFile,
    startedAt: rfc3339(startedAt),
    scenarioStartedAt: scenarioStarted !== undefined ? rfc3339(scenarioStarted) : null,
    durationSeconds: Math.round((Date.now() - startedAt) / 100) / 10,
    steps,
    kubectl: kubectlCommands(kubeconfig || '$(bash scripts/control-plane.sh kubeconfig)', opts.prefix, namespace, [...new Set(steps.map((s) => s.nodes[0]).filter((n): n is string => n !== undefined))]),
    kept: opts.keep,
  };
  println('');
  for (const l of renderSummary(summary, live)) println(l);
  if (opts.keep && kubeconfig) println(`\nThe cluster is still running:\n  export KUBECONFIG=${kubeconfig}\nStop it with: bash scripts/control-plane.sh down`);
  if (opts.summaryJson) await writeFile(opts.summaryJson, `${JSON.stringify(summary, null, 2)}\n`);
  if (interrupted) return 130;
  return ok ? 0 : 1;
}

/** {@link waitUntil} for setup (before there is a step context). */
async function waitUntilPlain(signal: AbortSignal, what: string, probe: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs / 1000} s`);
    await sleep(100, signal);
  }
}

