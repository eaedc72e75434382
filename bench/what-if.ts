/**
 * How long `node-lifecycle-controller what-if` takes for a large cluster: a generated snapshot
 * (default 5,000 nodes in 5 zones, 10 ReplicaSet pods + 1 DaemonSet pod per node, a volume on every
 * 10th node) and the scenario "zone a loses 40 % of its nodes at T+0", 15 min simulated, with the
 * controller's default flags. Reports wall time and CPU time (milliseconds) of the run alone
 * (snapshot generation excluded), the timeline's size and peak memory. Not a test: figures depend
 * on the machine and its load, so nothing here asserts a time.
 *
 *   node_modules/.bin/node --import tsx bench/what-if.ts     # 5,000 nodes, 3 repetitions
 *   node_modules/.bin/node --import tsx bench/what-if.ts --nodes 1000 --pods-per-node 30 --duration 10m --repeat 1
 *   node_modules/.bin/node --import tsx bench/what-if.ts --scenario lease-pause --duration 10m   # every Lease stops for 90 s
 *
 * `--scenario zone-loss` (default) is the scenario above; `lease-pause` stops every node's Lease
 * renewals for 90 s at T+0 (`pause-heartbeats`, `all: true`): every node goes Unknown at once and
 * the all-zones stop holds, the mass transition of issue 18.
 */
import { parseControllerFlags } from '../src/cli/flags.js';
import { parseScenario } from '../src/whatif/scenario.js';
import { runWhatIf } from '../src/whatif/run.js';
import { syntheticSnapshot } from '../src/whatif/synthetic.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}

const ZONES = ['a', 'b', 'c', 'd', 'e'];

/** The scenarios `--scenario` names, as scenario YAML steps. */
const SCENARIOS: Record<string, string> = {
  'zone-loss': '  - at: 0s\n    action: stop-kubelet\n    zone: a\n    percent: 40\n',
  'lease-pause': '  - at: 0s\n    action: pause-heartbeats\n    all: true\n    for: 90s\n',
};

/** One measurement. Times in milliseconds, memory in MiB. */
export interface WhatIfBenchResult {
  nodes: number;
  pods: number;
  simulated: string;
  wallMs: number;
  cpuMs: number;
  timelineEntries: number;
  peakRssMiB: number;
}

/**
 * Runs the what-if once over a generated cluster.
 * @param nodes total nodes (spread over 5 zones).
 * @param podsPerNode ReplicaSet pods per node.
 * @param duration simulated time, a Go duration.
 * @param scenarioName a key of {@link SCENARIOS}; throws an Error on any other.
 */
export async function measureWhatIf(nodes: number, podsPerNode: number, duration: string, scenarioName = 'zone-loss'): Promise<WhatIfBenchResult> {
  const steps = SCENARIOS[scenarioName];
  if (steps === undefined) throw new Error(`unknown --scenario ${scenarioName}: one of ${Object.keys(SCENARIOS).join(', ')}`);
  const snapshot = syntheticSnapshot({ zones: ZONES, nodesPerZone: Math.ceil(nodes / ZONES.length), podsPerNode, daemonSetPods: true, volumeEvery: 10 });
  const scenario = parseScenario(`duration: ${duration}\nsteps:\n${steps}`, 'bench');
  const config = await parseControllerFlags([], {});
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await runWhatIf(snapshot, scenario, config);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    nodes: snapshot.nodes.length,
    pods: snapshot.pods.length,
    simulated: duration,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    timelineEntries: r.timeline.length,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const nodes = Number(arg('nodes', '5000'));
  const podsPerNode = Number(arg('pods-per-node', '10'));
  const duration = arg('duration', '15m');
  const repeat = Number(arg('repeat', '3'));
  const scenarioName = arg('scenario', 'zone-loss');
  for (let i = 0; i < repeat; i++) {
    const r = await measureWhatIf(nodes, podsPerNode, duration, scenarioName);
    process.stdout.write(
      `what-if ${scenarioName}: ${r.nodes} nodes, ${r.pods} pods, ${r.simulated} simulated: wall ${(r.wallMs / 1000).toFixed(1)} s, CPU ${(r.cpuMs / 1000).toFixed(1)} s, ` +
        `${r.timelineEntries} timeline entries, peak RSS ${r.peakRssMiB.toFixed(0)} MiB\n`,
    );
  }
}
