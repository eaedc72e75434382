/**
 * The simulator's interactive fault commands (`kill NODE`, `zone-outage ZONE`, `stats`, …): a pure
 * parser, a dispatcher onto a {@link Fleet}, and the one-line stats format the CLI prints.
 */
import type { Fleet, FleetStats, HeartbeatMode } from './fleet.js';
import { PRESSURE_CONDITIONS, type PressureCondition } from './objects.js';
import { parseFaults, type UsageFaultKind } from './evictionmanager.js';

/** A parsed fault command. */
export type SimCommand =
  | { op: 'kill' | 'revive' | 'cordon' | 'uncordon' | 'shutdown' | 'delete' | 'pods'; node: string }
  | { op: 'zone-outage' | 'zone-restore'; zone: string }
  | { op: 'pressure'; node: string; condition: PressureCondition; on: boolean }
  | { op: 'heartbeat'; node: string; mode: HeartbeatMode }
  | { op: 'nodes'; zone?: string }
  | { op: 'usage-fault'; pod: string; kind: UsageFaultKind; ratePerSecond: number }
  | { op: 'usage'; pod: string; profile: string }
  | { op: 'stats' | 'help' | 'quit' | 'noop' };

/** Thrown by {@link parseSimCommand} for a line that is not a valid command; the message is one line. */
export class CommandSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandSyntaxError';
  }
}

/** Help text listing every command, one per line. */
export const COMMAND_HELP = [
  'kill NODE                      power loss: Lease renewals and status posts stop',
  'revive NODE                    power back on: Ready=True, heartbeats resume',
  'zone-outage ZONE               kill every node in ZONE',
  'zone-restore ZONE              revive every node in ZONE',
  'pressure NODE TYPE on|off      TYPE: MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable',
  'heartbeat NODE MODE            MODE: both, lease-only, status-only',
  'cordon NODE / uncordon NODE    set or clear spec.unschedulable',
  'shutdown NODE                  graceful node shutdown (Ready=False "node is shutting down", pods terminated)',
  'delete NODE                    delete the Node and its Lease',
  'nodes [ZONE] / pods NODE       list nodes (with liveness) or the pods on a node',
  'memory-leak POD RATE           grow the pod\'s working set by RATE per second (e.g. 50Mi; 0 stops); the node\'s kubelet evicts under pressure',
  'log-flood POD RATE             grow the pod\'s container logs by RATE bytes per second (DiskPressure)',
  'fork-bomb POD RATE             add RATE processes per second to the pod (PIDPressure)',
  'usage POD PROFILE              set usage, e.g. memory=300Mi,ephemeral-storage=1Gi,inodes=5000,pids=20 (memory=150% of request)',
  'stats                          print heartbeat statistics',
  'help / quit',
].join('\n');

const NODE_OPS = new Set(['kill', 'revive', 'cordon', 'uncordon', 'shutdown', 'delete', 'pods']);
const ZONE_OPS: Readonly<Record<string, 'zone-outage' | 'zone-restore'>> = {
  'zone-outage': 'zone-outage',
  'kill-zone': 'zone-outage',
  'zone-restore': 'zone-restore',
  'revive-zone': 'zone-restore',
};

function onOff(word: string | undefined): boolean {
  const w = (word ?? '').toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(w)) return true;
  if (['off', 'false', 'no', '0'].includes(w)) return false;
  throw new CommandSyntaxError(`expected on or off, got "${word ?? ''}"`);
}

/**
 * Parses one command line. Blank lines and `#` comments parse as `noop`.
 * @throws {CommandSyntaxError} for an unknown command or wrong arguments.
 */
export function parseSimCommand(line: string): SimCommand {
  const words = line.trim().split(/\s+/).filter((w) => w !== '');
  const [verb, ...args] = words;
  if (verb === undefined || verb.startsWith('#')) return { op: 'noop' };
  const op = verb.toLowerCase();
  const need = (n: number, usage: string): void => {
    if (args.length !== n) throw new CommandSyntaxError(`usage: ${usage}`);
  };
  if (NODE_OPS.has(op)) {
    need(1, `${op} NODE`);
    return { op: op as 'kill', node: args[0] as string };
  }
  const zoneOp = ZONE_OPS[op];
  if (zoneOp) {
    need(1, `${op} ZONE`);
    return { op: zoneOp, zone: args[0] as string };
  }
  switch (op) {
    case 'pressure': {
      need(3, 'pressure NODE TYPE on|off');
      const wanted = (args[1] as string).toLowerCase();
      const condition = PRESSURE_CONDITIONS.find((c) => c.toLowerCase() === wanted || c.toLowerCase() === `${wanted}pressure`);
      if (!condition) throw new CommandSyntaxError(`unknown condition "${args[1]}"; one of ${PRESSURE_CONDITIONS.join(', ')}`);
      return { op: 'pressure', node: args[0] as string, condition, on: onOff(args[2]) };
    }
    case 'heartbeat': {
      need(2, 'heartbeat NODE both|lease-only|status-only');
      const mode = args[1] as string;
      if (mode !== 'both' && mode !== 'lease-only' && mode !== 'status-only') {
        throw new CommandSyntaxError(`unknown heartbeat mode "${mode}"; one of both, lease-only, status-only`);
      }
      return { op: 'heartbeat', node: args[0] as string, mode };
    }
    case 'memory-leak':
    case 'log-flood':
    case 'fork-bomb': {
      need(2, `${op} POD RATE`);
      let rate: number;
      try {
        rate = parseFaults(`${op}=${args[1] as string}`).get(op) ?? 0;
      } catch (err) {
        throw new CommandSyntaxError((err as Error).message);
      }
      return { op: 'usage-fault', pod: args[0] as string, kind: op, ratePerSecond: rate };
    }
    case 'usage':
      need(2, 'usage POD PROFILE');
      return { op: 'usage', pod: args[0] as string, profile: args[1] as string };
    case 'nodes':
      if (args.length > 1) throw new CommandSyntaxError('usage: nodes [ZONE]');
      return args[0] !== undefined ? { op: 'nodes', zone: args[0] } : { op: 'nodes' };
    case 'stats':
    case 'help':
      need(0, op);
      return { op };
    case 'quit':
    case 'exit':
      return { op: 'quit' };
    default:
      throw new CommandSyntaxError(`unknown command "${verb}"; type help for the list`);
  }
}

/**
 * One-line summary of {@link FleetStats} (lags in ms over the stats window).
 * @returns for example `nodes 30/30 live, pods 150, renewals 900, status posts 90, errors 0, heartbeat lag p50 1ms p99 9ms max 14ms, …`.
 */
export function formatStats(s: FleetStats): string {
  const lag = s.heartbeatLagMs;
  const ms = (v: number): string => `${Math.round(v)}ms`;
  return (
    `nodes ${s.liveNodes}/${s.nodes} live, pods ${s.pods}, renewals ${s.leaseRenewals}, status posts ${s.statusPosts}, ` +
    `errors ${s.errors}, heartbeat lag p50 ${ms(lag.p50)} p99 ${ms(lag.p99)} max ${ms(lag.max)} (${lag.samples} in ${s.windowMs / 1000}s), ` +
    `write p99 ${ms(s.writeLatencyMs.p99)}, late ${s.lateHeartbeats}, queued ${s.queuedWrites}`
  );
}

/**
 * Runs a parsed command against the fleet.
 * @returns text to print (may be empty or multi-line).
 * @throws {Error} from the fleet, for example for an unknown node or zone, or a failed write.
 */
export async function applySimCommand(fleet: Fleet, cmd: SimCommand): Promise<string> {
  switch (cmd.op) {
    case 'kill':
      fleet.killNode(cmd.node);
      return `killed ${cmd.node}`;
    case 'revive':
      await fleet.reviveNode(cmd.node);
      return `revived ${cmd.node}`;
    case 'cordon':
    case 'uncordon':
      await fleet.cordon(cmd.node, cmd.op === 'cordon');
      return `${cmd.op}ed ${cmd.node}`;
    case 'shutdown':
      await fleet.gracefulShutdown(cmd.node);
      return `shut down ${cmd.node}`;
    case 'delete':
      await fleet.deleteNode(cmd.node);
      return `deleted ${cmd.node}`;
    case 'pods':
      fleet.zoneOf(cmd.node);
      return fleet.podsOn(cmd.node).join('\n');
    case 'zone-outage':
      fleet.killZone(cmd.zone);
      return `killed ${fleet.nodesInZone(cmd.zone).length} nodes in ${cmd.zone}`;
    case 'zone-restore':
      await fleet.reviveZone(cmd.zone);
      return `revived ${fleet.nodesInZone(cmd.zone).length} nodes in ${cmd.zone}`;
    case 'pressure':
      await fleet.setCondition(cmd.node, cmd.condition, cmd.on);
      return `${cmd.node} ${cmd.condition}=${cmd.on ? 'True' : 'False'}`;
    case 'heartbeat':
      await fleet.setHeartbeatMode(cmd.node, cmd.mode);
      return `${cmd.node} heartbeat ${cmd.mode}`;
    case 'nodes': {
      const names = cmd.zone !== undefined ? fleet.nodesInZone(cmd.zone) : fleet.nodeNames();
      return names.map((n) => `${n}\t${fleet.zoneOf(n)}\t${fleet.isAlive(n) ? 'alive' : 'dead'}`).join('\n');
    }
    case 'usage-fault': {
      const node = await fleet.nodePressure.fault(fleet.namespace, cmd.pod, cmd.kind, cmd.ratePerSecond);
      return `${cmd.pod} on ${node}: ${cmd.kind} ${cmd.ratePerSecond > 0 ? `${cmd.ratePerSecond}/s` : 'stopped'}`;
    }
    case 'usage': {
      const node = await fleet.nodePressure.usage(fleet.namespace, cmd.pod, cmd.profile);
      return `${cmd.pod} on ${node}: usage ${cmd.profile}`;
    }
    case 'stats':
      return formatStats(fleet.stats());
    case 'help':
      return COMMAND_HELP;
    case 'quit':
    case 'noop':
      return '';
  }
}
