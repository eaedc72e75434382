/**
 * CPU of the continuous second-actor check (src/secondactor/check.ts) per informer event: its node
 * and pod `update` handlers (and the pod `delete` handler), driven in-process with the slim objects
 * the informers deliver, against a loop that dispatches the same events to a handler that does
 * nothing. No API server: this is the cost the check adds to every node and pod event the
 * controller already receives.
 *
 * Cases (each `--events` calls, alternating two objects so no call sees the same pair twice):
 * - `pod-status`: a running pod's status update (Ready flips; Ready and PodScheduled conditions): the
 *   steady state of a 150,000-pod cluster;
 * - `pod-terminating`: a pod already carrying DisruptionTarget/DeletionByTaintManager and a deletion
 *   timestamp (a status update while it terminates): judged, nothing new;
 * - `node-heartbeat`: a node status update with its taints unchanged (none);
 * - `node-tainted`: the same on a node holding `unreachable:NoExecute` and `not-ready:NoSchedule`;
 * - `node-taint-ours`: the NoExecute taint appearing, written by this process (a ledger hit): the
 *   path of every taint the controller itself adds;
 * - `pod-delete`: a pod deleted without a decider's condition (a ReplicaSet scale-down).
 *
 *   node --import tsx bench/secondactor.ts [--events 2000000] [--rounds 5]
 *
 * Prints one JSON line per case: nanoseconds of CPU (user+sys of this process) per event for the
 * check's handler minus the empty handler's, median and min–max over the rounds.
 */
import { parseArgs } from 'node:util';
import type { Node, Pod } from '../src/kube/objects.js';
import { silentLogger } from '../src/log/logger.js';
import { SecondActorCheck } from '../src/secondactor/check.js';
import { OwnWrites } from '../src/secondactor/ownwrites.js';
import { realClock } from '../src/util/clock.js';
import { median } from './lib/report.js';

const { values } = parseArgs({ options: { events: { type: 'string', default: '2000000' }, rounds: { type: 'string', default: '5' } } });
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);
const NOW = Date.now();

type Handlers<T> = { update?: (old: T, cur: T) => void; delete?: (o: T) => void };
/** An informer's dispatch: the handlers subscribed, called in order. */
class Source<T> {
  readonly handlers: Handlers<T>[] = [];
  subscribe(h: Handlers<T>): void {
    this.handlers.push(h);
  }
  get(): T | undefined {
    return undefined;
  }
}

function pod(name: string, extra: Partial<Pod> = {}): Pod {
  return {
    namespace: 'shop',
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    nodeName: 'n1',
    phase: 'Running',
    creationTimestamp: NOW - 3_600_000,
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: NOW - 3_600_000 },
      { type: 'Ready', status: 'True', lastTransitionTime: NOW - 60_000 },
    ],
    tolerations: [],
    ownerReferences: [],
    pvcNames: [],
    finalizers: [],
    ...extra,
  };
}
function node(name: string, taints: Node['taints'] = []): Node {
  return { name, uid: `uid-${name}`, resourceVersion: '1', creationTimestamp: NOW - 3_600_000, labels: {}, unschedulable: false, taints, conditions: [{ type: 'Ready', status: 'True' }] };
}

/** One check, acting, over fresh sources; and the same sources with an empty handler for the baseline. */
function world(): { nodes: Source<Node>; pods: Source<Pod>; own: OwnWrites } {
  const nodes = new Source<Node>();
  const pods = new Source<Pod>();
  const own = new OwnWrites(realClock);
  const check = new SecondActorCheck({ identity: 'bench', clock: realClock, log: silentLogger, events: { record: () => undefined }, actions: { inc: () => undefined }, own, nodes, pods, deciders: new Set(['node-lifecycle', 'taint-eviction', 'pod-gc'] as const), scoped: false });
  check.start();
  return { nodes, pods, own };
}

function cpuNs(fn: () => void): number {
  const t0 = process.cpuUsage();
  fn();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) * 1000;
}

interface Case {
  name: string;
  run(w: { nodes: Source<Node>; pods: Source<Pod>; own: OwnWrites }, n: number): void;
}

const running = [pod('a'), pod('a', { conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'False' }] })] as const;
const dt = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint', lastTransitionTime: NOW - 5000 };
const terminating = [pod('t', { conditions: [dt, { type: 'Ready', status: 'True' }], deletionTimestamp: NOW + 25_000 }), pod('t', { conditions: [dt, { type: 'Ready', status: 'False' }], deletionTimestamp: NOW + 25_000 })] as const;
const bare = [node('n'), node('n')] as const;
const tainted = [
  node('n', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW - 5000 }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]),
  node('n', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: NOW - 5000 }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]),
] as const;
const appears = [node('m'), node('m', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: Math.floor(NOW / 1000) * 1000 + 1000 }])] as const;

const CASES: Case[] = [
  { name: 'pod-status', run: (w, n) => { for (let i = 0; i < n; i++) for (const h of w.pods.handlers) h.update?.(running[i & 1]!, running[(i + 1) & 1]!); } },
  { name: 'pod-terminating', run: (w, n) => { for (let i = 0; i < n; i++) for (const h of w.pods.handlers) h.update?.(terminating[i & 1]!, terminating[(i + 1) & 1]!); } },
  { name: 'node-heartbeat', run: (w, n) => { for (let i = 0; i < n; i++) for (const h of w.nodes.handlers) h.update?.(bare[i & 1]!, bare[(i + 1) & 1]!); } },
  { name: 'node-tainted', run: (w, n) => { for (let i = 0; i < n; i++) for (const h of w.nodes.handlers) h.update?.(tainted[i & 1]!, tainted[(i + 1) & 1]!); } },
  {
    name: 'node-taint-ours',
    run: (w, n) => {
      w.own.noteTaint('m', 'node.kubernetes.io/unreachable', 'NoExecute');
      for (let i = 0; i < n; i++) for (const h of w.nodes.handlers) h.update?.(appears[0], appears[1]);
    },
  },
  { name: 'pod-delete', run: (w, n) => { for (let i = 0; i < n; i++) for (const h of w.pods.handlers) h.delete?.(running[i & 1]!); } },
];

for (const c of CASES) {
  const perEvent: number[] = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const checked = world();
    const empty = { nodes: new Source<Node>(), pods: new Source<Pod>(), own: new OwnWrites(realClock) };
    empty.nodes.subscribe({ update: () => undefined });
    empty.pods.subscribe({ update: () => undefined, delete: () => undefined });
    const base = cpuNs(() => c.run(empty, EVENTS));
    const with_ = cpuNs(() => c.run(checked, EVENTS));
    if (r > 0) perEvent.push((with_ - base) / EVENTS); // round 0 warms the JIT up
  }
  const sorted = [...perEvent].sort((a, b) => a - b);
  process.stdout.write(`${JSON.stringify({ case: c.name, events: EVENTS, rounds: ROUNDS, nsPerEventMedian: Number((median(perEvent) ?? Number.NaN).toFixed(1)), nsPerEventMin: Number(sorted[0]!.toFixed(1)), nsPerEventMax: Number(sorted.at(-1)!.toFixed(1)) })}\n`);
}
