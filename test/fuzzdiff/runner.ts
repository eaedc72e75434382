/**
 * Plays one differential scenario (test/fuzzdiff/scenario.ts) on a private control plane:
 * a fresh namespace and simulated fleet, kube-controller-manager 1.37.2 acting
 * (`node-lifecycle-controller,taint-eviction-controller,pod-garbage-collector-controller`) and ours
 * as a `--dry-run` shadow beside it with the same flags, the timeline played in real time, then
 * kube-controller-manager's decisions (test/fuzzdiff/recorder.ts) compared with the shadow's
 * (test/fuzzdiff/compare.ts).
 *
 * One control plane serves a whole campaign (a fresh one costs ~10 s of the ~1 min a scenario takes);
 * scenarios run one after another and each removes its nodes at the end, because
 * kube-controller-manager judges every node of the cluster and its zone states must see only the
 * scenario's fleet. kube-controller-manager and the shadow are started afresh for each scenario (the
 * scenario chooses their flags).
 *
 * Not upstream: test tooling.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
// Relative, not the workspace package name: a worktree's node_modules may point at another checkout's packages/sim.
import { Fleet } from '../../packages/sim/src/fleet.js';
import { ControllerProcess, UPSTREAM_CONTROLLERS, type SharedControllerFlags } from '../../bench/lib/procs.js';
import type { KubeClients } from '../../src/kube/client.js';
import { toNode, toPod, type Taint, type Toleration } from '../../src/kube/objects.js';
import { createTestNamespace, waitFor } from '../support/cluster.js';
import type { PrivateControlPlane } from '../support/private-cluster.js';
import { compareDecisions, fromShadow, postOutageEndMs, SHADOW_LAG_MS, type CompareContext, type CompareRow } from './compare.js';
import { DecisionRecorder, type Decision } from './recorder.js';
import type { Scenario, Step } from './scenario.js';
import { CacheLagSampler, ShadowProcess, type LagSample } from './shadow.js';

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
const TOLERATED_KEYS = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'];
/**
 * kube-controller-manager's controllers: the three ours replaces plus the attach/detach controller,
 * whose out-of-service path is compared with our force detach (its 6 min unmount timeout is fixed in
 * 1.37, `ReconcilerMaxWaitForUnmountDuration`, and longer than a scenario).
 */
const KCM_CONTROLLERS = `${UPSTREAM_CONTROLLERS['1.37']},persistentvolume-attach-detach-controller`;
/** The simulator's CSI driver (packages/sim DEFAULT_CSI_DRIVER). */
const CSI_DRIVER = 'sim.csi.nlc.dev';
/** Zone eviction rate of both controllers, nodes/s: one taint per 2 s per zone, so the token bucket shows. */
const EVICTION_RATE = 0.5;

/** What a campaign shares: the control plane and the binary. */
export interface RunEnv {
  cp: PrivateControlPlane;
  clients: KubeClients;
  kcmBinary: string;
  /** Controller logs go here (`<prefix>-kcm.log`). */
  logDir: string;
  /** Repository root (kube-controller-manager's working directory). */
  root: string;
}

/** One scenario's outcome. Times epoch **ms**, durations **ms**. */
export interface ScenarioResult {
  id: string;
  /** The scenario file, when it was read from or saved to one. */
  file?: string;
  prefix: string;
  /** When play began (step times are relative to it), epoch ms. */
  t0Ms: number;
  /** When each step was applied, epoch ms (late steps show a loaded machine). */
  applied: { atS: number; op: string; atMs: number }[];
  wallMs: number;
  kcm: Decision[];
  ours: Decision[];
  rows: CompareRow[];
  /** The comparison's context (restart windows, tolerance), so that a report can be compared again. */
  ctx: CompareContext;
  /** Steps that could not be applied (e.g. a pod already gone), and other remarks. */
  notes: string[];
  failedPolls: number;
  /** How far the shadow's Node and Lease caches were behind the API server, once a second (test/fuzzdiff/shadow.ts). */
  cacheLag: LagSample[];
}

interface Controllers {
  kcm: ControllerProcess;
  ours: ShadowProcess;
}

function flagsOf(s: Scenario): SharedControllerFlags {
  return {
    nodeMonitorPeriod: `${s.monitorPeriodS}s`,
    nodeMonitorGracePeriod: `${s.graceS}s`,
    nodeStartupGracePeriod: '30s',
    nodeEvictionRate: EVICTION_RATE,
    secondaryNodeEvictionRate: 0.01,
    kubeApiQps: 20,
    kubeApiBurst: 30,
  };
}

/**
 * kube-controller-manager, started again when it gives up before running its controllers: it exits
 * when the API server is not healthy within 20 s, which a restart of both during an API server
 * restart on a loaded machine can hit.
 */
async function startKcm(env: RunEnv, s: Scenario, prefix: string, generation: number): Promise<ControllerProcess> {
  for (let attempt = 0; ; attempt++) {
    const kcm = newKcm(env, s, prefix, `${generation}${attempt > 0 ? `-${attempt}` : ''}`);
    try {
      await kcm.waitForLine(/Started controller|Starting controller|Starting node controller|Caches are synced/, 120_000);
      return kcm;
    } catch (err) {
      await kcm.stop();
      if (attempt >= 4) throw err;
      await sleep(2000);
    }
  }
}

async function startControllers(env: RunEnv, s: Scenario, prefix: string, nodes: number, generation: number): Promise<Controllers> {
  const f = flagsOf(s);
  // kube-controller-manager first, the shadow once it runs: each controller gives every node a fresh
  // grace period at its start, so a shadow up before it would judge seconds sooner (after a restart,
  // campaign scenario 300/12: 3.4 s), an artefact of the harness and not a difference.
  const kcm = await startKcm(env, s, prefix, generation);
  // Ours in a process of its own, as kube-controller-manager (test/fuzzdiff/shadow.ts says why).
  const ours = new ShadowProcess({
    root: env.root,
    kubeconfig: env.cp.kubeconfig,
    prefix,
    logFile: join(env.logDir, `${prefix}.log`),
    flags: [
      '--dry-run',
      `--controllers=${KCM_CONTROLLERS}`,
      `--node-monitor-grace-period=${f.nodeMonitorGracePeriod}`,
      `--node-monitor-period=${f.nodeMonitorPeriod}`,
      `--node-startup-grace-period=${f.nodeStartupGracePeriod}`,
      `--node-eviction-rate=${f.nodeEvictionRate}`,
      `--secondary-node-eviction-rate=${f.secondaryNodeEvictionRate}`,
      `--kube-api-qps=${f.kubeApiQps}`,
      `--kube-api-burst=${f.kubeApiBurst}`,
    ],
  });
  try {
    await ours.port(120_000);
    await waitFor('the shadow sees the fleet', async () => (await ours.state().catch(() => undefined))?.nodeLifecycle?.nodes?.length === nodes, 60_000, 250);
  } catch (err) {
    await Promise.all([ours.stop(), kcm.stop()]);
    throw err;
  }
  return { kcm, ours };
}

function newKcm(env: RunEnv, s: Scenario, prefix: string, generation: string): ControllerProcess {
  const f = flagsOf(s);
  return new ControllerProcess(
    {
      kind: 'upstream',
      kubeconfig: env.cp.kubeconfig,
      flags: f,
      upstreamBinary: env.kcmBinary,
      upstreamControllers: KCM_CONTROLLERS,
      upstreamVersion: '1.37',
      oursMode: 'tsx',
      oursEntry: '',
      metricsPort: 0,
      logLevel: 'info',
    },
    join(env.logDir, `${prefix}-kcm-${generation}.log`),
    env.root,
  );
}

async function shadowDecisions(c: ShadowProcess): Promise<Decision[]> {
  const body = await c.state();
  return (body.shadow?.decisions ?? []).map(fromShadow).filter((d): d is Decision => d !== undefined);
}

async function stopControllers(c: Controllers, into: Decision[], notes: string[]): Promise<void> {
  // A failed read would look like a shadow that decided nothing: say so.
  into.push(...(await shadowDecisions(c.ours).catch((err: unknown) => (notes.push(`the shadow's decisions could not be read: ${err instanceof Error ? err.message : String(err)}`), []))));
  await Promise.all([c.ours.stop(), c.kcm.stop()]);
}

/** Reads, changes and writes back a node's taints, guarded by its resourceVersion; retries conflicts. */
async function editTaints(clients: KubeClients, name: string, change: (t: readonly Taint[]) => Taint[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const node = toNode(await clients.core.readNode({ name }));
    if (!node) throw new Error(`node ${name} unreadable`);
    const taints = change(node.taints).map((t) => ({ key: t.key, effect: t.effect, ...(t.value !== undefined ? { value: t.value } : {}), ...(t.timeAdded !== undefined ? { timeAdded: new Date(t.timeAdded).toISOString() } : {}) }));
    try {
      await clients.core.patchNode({ name, body: { metadata: { resourceVersion: node.resourceVersion }, spec: { taints } } }, MERGE_PATCH);
      return;
    } catch (err) {
      if (attempt >= 8) throw err;
      await sleep(100);
    }
  }
}

/**
 * Sets the pod's unreachable/not-ready NoExecute tolerations to `seconds` (adding them when absent):
 * the API server allows changing only `tolerationSeconds` of an existing toleration, and additions.
 */
async function editTolerations(clients: KubeClients, namespace: string, name: string, seconds: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const pod = toPod(await clients.core.readNamespacedPod({ namespace, name }));
    if (!pod) throw new Error(`pod ${name} unreadable`);
    if (pod.deletionTimestamp !== undefined) throw new Error(`pod ${name} is terminating`);
    const tolerations: Toleration[] = pod.tolerations.map((t) =>
      TOLERATED_KEYS.includes(t.key ?? '') && (t.effect === 'NoExecute' || t.effect === undefined || t.effect === '') ? { ...t, tolerationSeconds: seconds } : { ...t },
    );
    for (const key of TOLERATED_KEYS) if (!tolerations.some((t) => t.key === key)) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
    try {
      await clients.core.patchNamespacedPod({ namespace, name, body: { metadata: { resourceVersion: pod.resourceVersion }, spec: { tolerations } } }, MERGE_PATCH);
      return;
    } catch (err) {
      if (attempt >= 8) throw err;
      await sleep(100);
    }
  }
}

/**
 * The simulated driver as kube-controller-manager's CSI plugin needs it: a CSIDriver that requires
 * attach, and a CSINode per node naming the driver (what the node's CSI registrar would publish).
 * Idempotent. @throws {Error} on an API error other than AlreadyExists.
 */
async function registerCsi(clients: KubeClients, nodes: readonly string[]): Promise<void> {
  const ignoreExists = (err: unknown): void => {
    if ((err as { code?: number }).code !== 409) throw err;
  };
  await clients.storage.createCSIDriver({ body: { metadata: { name: CSI_DRIVER }, spec: { attachRequired: true, podInfoOnMount: false } } }).catch(ignoreExists);
  for (const name of nodes) {
    const node = await clients.core.readNode({ name });
    await clients.storage
      .createCSINode({
        body: {
          metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid ?? '' }] },
          spec: { drivers: [{ name: CSI_DRIVER, nodeID: name, topologyKeys: [] }] },
        },
      })
      .catch(ignoreExists);
  }
}

/**
 * Ours' deletion schedule of each pod, from the shadow's JSON log (debug level): the taint eviction
 * controller's "Pod deletion scheduled" (with `at`) and "Cancelling deletion of pod" lines, in order,
 * and its blind stretches ("sight of the cluster regained", with `blindMs` and `holdUntil`).
 * @returns the entries (empty when the log cannot be read: the rule that needs them then names nothing).
 */
export async function oursScheduled(logFile: string): Promise<Required<Pick<CompareContext, 'oursScheduled' | 'oursBlind'>>> {
  const out: Required<Pick<CompareContext, 'oursScheduled' | 'oursBlind'>> = { oursScheduled: [], oursBlind: [] };
  const text = await readFile(logFile, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    if (!line.includes('deletion') && !line.includes('sight of the cluster regained')) continue;
    let j: { msg?: string; pod?: string; time?: string; at?: string; blindMs?: number; holdUntil?: string };
    try {
      j = JSON.parse(line) as typeof j;
    } catch {
      continue;
    }
    if (j.time === undefined) continue;
    const loggedMs = Date.parse(j.time);
    if (j.msg?.startsWith('taint eviction: sight of the cluster regained') && j.blindMs !== undefined && j.holdUntil !== undefined) {
      out.oursBlind.push({ loggedMs, blindMs: j.blindMs, holdUntilMs: Date.parse(j.holdUntil) });
    } else if (j.pod === undefined) continue;
    else if (j.msg === 'Pod deletion scheduled' && j.at !== undefined) out.oursScheduled.push({ pod: j.pod, loggedMs, atMs: Date.parse(j.at) });
    else if (j.msg === 'Cancelling deletion of pod') out.oursScheduled.push({ pod: j.pod, loggedMs });
  }
  return out;
}

/**
 * Plays one scenario and compares. Saves nothing; the caller writes files.
 * @throws {Error} when the fleet or a controller cannot be started (a broken environment, not a finding).
 */
export async function runScenario(env: RunEnv, s: Scenario, file?: string): Promise<ScenarioResult> {
  const started = Date.now();
  const prefix = `fd-${started.toString(36)}`;
  const notes: string[] = [];
  const applied: ScenarioResult['applied'] = [];
  const { clients, cp } = env;
  await createTestNamespace(clients, prefix);
  const fleet = new Fleet({
    clients,
    prefix,
    namespace: prefix,
    zones: s.zones,
    nodesPerZone: s.nodesPerZone,
    podsPerNode: s.podsPerNode,
    podMix: s.podMix,
    tolerationSeconds: s.tolerationS,
    leaseRenewIntervalMs: 1000,
    // Status every 60 s: a node whose Lease pauses goes stale (as a kubelet reporting every 5 min).
    nodeStatusUpdateFrequencyMs: 60_000,
  });
  const ours: Decision[] = [];
  let recorder: DecisionRecorder | undefined;
  let sampler: CacheLagSampler | undefined;
  let controllers: Controllers | undefined;
  const background: Promise<void>[] = [];
  const ctx: CompareContext = {
    toleranceMs: s.monitorPeriodS * 1000 + 1000,
    graceMs: s.graceS * 1000,
    maxTolerationMs: 1000 * Math.max(s.tolerationS, ...s.steps.map((x) => (x.op === 'edit-toleration' ? x.seconds : 0))),
    controllerRestarts: [],
    apiserverRestarts: [],
    tolerationEdits: [],
    endMs: 0,
    outOfService: [],
    nodeFaults: [],
  };
  try {
    await fleet.start();
    const names = fleet.nodeNames();
    // The fleet names nodes `<prefix>-<zone>-<i>` (packages/sim/src/fleet.ts).
    ctx.nodeZones = Object.fromEntries(names.map((n) => [n, n.slice(prefix.length + 1).replace(/-\d+$/, '')]));
    await registerCsi(clients, names);
    recorder = new DecisionRecorder(clients, `nlc.sim/fleet=${prefix}`, prefix, (n) => !names.includes(n) || fleet.isAlive(n));
    await recorder.start();
    let generation = 0;
    controllers = await startControllers(env, s, prefix, names.length, generation++);
    // Let start-up settle (both remove the kubelets' registration taints).
    await sleep(3000);
    sampler = new CacheLagSampler(clients, prefix, () => controllers?.ours);
    sampler.start();
    const t0 = Date.now();
    const nodeName = (i: number): string => names[i] as string;
    // A background step that fails is a note (and, for a controller restart, a scenario without them).
    const noted = async (task: () => Promise<void>, what: string): Promise<void> => {
      await task().catch((err: unknown) => void notes.push(`${what}: ${err instanceof Error ? err.message : String(err)}`));
    };
    // Each node's kubelet faults, from when a step began to when its end began (the comparison names a
    // decision one side never made after an outage by them: compare.ts healthyDuring).
    const faultFrom = (node: number, silent: boolean): void => void ctx.nodeFaults?.push({ node: nodeName(node), fromMs: Date.now(), toMs: Number.POSITIVE_INFINITY, silent });
    const faultTo = (node: number): void => {
      const open = ctx.nodeFaults?.find((f) => f.node === nodeName(node) && f.toMs === Number.POSITIVE_INFINITY);
      if (open) open.toMs = Date.now();
    };
    const apply = async (st: Step): Promise<void> => {
      if (st.op === 'kill' || st.op === 'pause-lease' || st.op === 'not-ready') faultFrom(st.node, st.op !== 'not-ready');
      if (st.op === 'revive' || st.op === 'resume-lease' || st.op === 'ready') faultTo(st.node);
      switch (st.op) {
        case 'kill':
          fleet.killNode(nodeName(st.node));
          return;
        case 'revive':
          return fleet.reviveNode(nodeName(st.node));
        case 'pause-lease':
          return fleet.setHeartbeatMode(nodeName(st.node), 'status-only');
        case 'resume-lease':
          await fleet.setHeartbeatMode(nodeName(st.node), 'both');
          // A real kubelet's status sync (every 10 s) posts Ready=True once the API server's copy
          // differs from its own (a controller's Unknown); the simulator posts status only every 60 s
          // here, so post it now. The shadow's overlay assumes this kubelet behaviour (shadow-mode.md).
          return fleet.setReady(nodeName(st.node), true);
        case 'not-ready':
          return fleet.setReady(nodeName(st.node), false);
        case 'ready':
          return fleet.setReady(nodeName(st.node), true);
        case 'edit-toleration': {
          const pods = fleet.podsOn(nodeName(st.node));
          const pod = pods[st.slot % Math.max(1, pods.length)];
          if (pod === undefined) throw new Error('no pod left on the node');
          await editTolerations(clients, prefix, pod, st.seconds);
          ctx.tolerationEdits.push({ pod: `${prefix}/${pod}`, atMs: Date.now() });
          return;
        }
        case 'add-out-of-service': {
          // From when the addition was sent: no controller can react before it.
          const fromMs = Date.now();
          await editTaints(clients, nodeName(st.node), (t) => [...t.filter((x) => x.key !== OUT_OF_SERVICE), { key: OUT_OF_SERVICE, value: 'nodeshutdown', effect: 'NoExecute' }]);
          ctx.outOfService?.push({ node: nodeName(st.node), fromMs, toMs: Number.POSITIVE_INFINITY });
          return;
        }
        case 'remove-out-of-service': {
          // The window ends when the removal was sent (it may be seen a little later: a longer window
          // only narrows what it explains).
          const open = ctx.outOfService?.find((w) => w.node === nodeName(st.node) && w.toMs === Number.POSITIVE_INFINITY);
          if (open) open.toMs = Date.now();
          return editTaints(clients, nodeName(st.node), (t) => t.filter((x) => x.key !== OUT_OF_SERVICE));
        }
        case 'restart-apiserver': {
          const w = { fromMs: Date.now(), toMs: Number.POSITIVE_INFINITY };
          ctx.apiserverRestarts.push(w);
          background.push(
            noted(async () => {
              await cp.run('stop-apiserver');
              await sleep(st.downS * 1000);
              await cp.run('start-apiserver');
              w.toMs = Date.now();
            }, 'restart-apiserver'),
          );
          return;
        }
        case 'restart-controllers': {
          const w: CompareContext['controllerRestarts'][number] = { fromMs: Date.now(), toMs: Number.POSITIVE_INFINITY };
          ctx.controllerRestarts.push(w);
          const old = controllers;
          controllers = undefined;
          background.push(
            noted(async () => {
              if (old) await stopControllers(old, ours, notes);
              await sleep(st.downS * 1000);
              w.startedMs = Date.now();
              controllers = await startControllers(env, s, prefix, names.length, generation++);
              w.toMs = Date.now();
            }, 'restart-controllers'),
          );
          return;
        }
      }
    };
    for (const st of s.steps) {
      const wait = t0 + st.atS * 1000 - Date.now();
      if (wait > 0) await sleep(wait);
      applied.push({ atS: st.atS, op: st.op, atMs: Date.now() });
      await apply(st).catch((err: unknown) => void notes.push(`step ${st.op} at ${st.atS}s: ${err instanceof Error ? err.message : String(err)}`));
    }
    // The tail: no new faults, time for the last decisions of both sides.
    const endAt = t0 + (s.durationS + s.graceS + 6) * 1000;
    if (endAt > Date.now()) await sleep(endAt - Date.now());
    await Promise.all(background);
    // After an API server outage, on until every decision either side can make on what it saw after
    // it is due (client-go's reconnect window, then detection, the longest toleration, pod GC's pass):
    // no post-outage row is then excused by the end of the run (issue 57).
    const outageEnd = Math.max(0, ...ctx.apiserverRestarts.map((w) => postOutageEndMs(w, ctx)).filter(Number.isFinite));
    if (outageEnd > Date.now()) {
      notes.push(`played on ${((outageEnd - Math.max(endAt, t0)) / 1000).toFixed(0)} s past the scenario's end to cover the reconnect window after the API server outage`);
      await sleep(outageEnd - Date.now());
    }
    ctx.endMs = Date.now();
    sampler.stop();
    const lag = sampler.maxLagMs();
    // A shadow whose caches trail the API server decides late or not at all: its rows then say
    // nothing about the controller (campaign scenarios 300/14, 300/20).
    ctx.shadowLag = sampler.lagIntervals(SHADOW_LAG_MS);
    if (Math.max(lag.leases, lag.nodes) > SHADOW_LAG_MS) notes.push(`the shadow's caches trailed the API server: Leases up to ${(lag.leases / 1000).toFixed(1)} s, Nodes up to ${(lag.nodes / 1000).toFixed(1)} s`);
    await recorder.stop();
    // The first poll answered after each stop: the API server was back by then (the comparison's
    // reconnect race counts ours' decisions from there, not from the later `/readyz`).
    for (const w of ctx.apiserverRestarts) {
      const back = recorder.answeredAgainMs.find((t) => t > w.fromMs);
      if (back !== undefined && back <= w.toMs) w.servingMs = back;
    }
    if (controllers) await stopControllers(controllers, ours, notes);
    controllers = undefined;
    Object.assign(ctx, await oursScheduled(join(env.logDir, `${prefix}.log`)));
    const kcm = recorder.decisions.filter((d) => d.atMs >= t0);
    const oursInPlay = ours.filter((d) => d.atMs >= t0);
    return { id: s.id, ...(file !== undefined ? { file } : {}), prefix, t0Ms: t0, applied, wallMs: Date.now() - started, kcm, ours: oursInPlay, rows: compareDecisions(kcm, oursInPlay, ctx), ctx, notes, failedPolls: recorder.failedPolls, cacheLag: sampler.samples };
  } finally {
    sampler?.stop();
    await Promise.allSettled(background);
    if (controllers) await stopControllers(controllers, ours, notes).catch(() => undefined);
    await recorder?.stop();
    // Removes the nodes too (kube-controller-manager of the next scenario must see only its fleet);
    // the namespace stays, as the fleet's cleanup leaves it (no namespace controller runs here).
    await fleet.cleanup().catch(() => undefined);
    // No garbage collector runs here to follow the CSINodes' owner references.
    await Promise.allSettled(fleet.nodeNames().map((name) => clients.storage.deleteCSINode({ name })));
  }
}
