import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CommandSyntaxError, formatStats, parseSimCommand } from '@node-lifecycle-controller/sim/commands';
import { runSimCommand } from '@node-lifecycle-controller/sim/cli';

describe('fault command parser', () => {
  test('parses node, zone, pressure and heartbeat commands', () => {
    assert.deepEqual(parseSimCommand('kill n1'), { op: 'kill', node: 'n1' });
    assert.deepEqual(parseSimCommand('  revive   n1 '), { op: 'revive', node: 'n1' });
    assert.deepEqual(parseSimCommand('zone-outage zone-a'), { op: 'zone-outage', zone: 'zone-a' });
    assert.deepEqual(parseSimCommand('kill-zone zone-a'), { op: 'zone-outage', zone: 'zone-a' });
    assert.deepEqual(parseSimCommand('zone-restore zone-b'), { op: 'zone-restore', zone: 'zone-b' });
    assert.deepEqual(parseSimCommand('pressure n1 MemoryPressure on'), { op: 'pressure', node: 'n1', condition: 'MemoryPressure', on: true });
    assert.deepEqual(parseSimCommand('pressure n1 disk off'), { op: 'pressure', node: 'n1', condition: 'DiskPressure', on: false });
    assert.deepEqual(parseSimCommand('pressure n1 networkunavailable on'), {
      op: 'pressure',
      node: 'n1',
      condition: 'NetworkUnavailable',
      on: true,
    });
    assert.deepEqual(parseSimCommand('heartbeat n1 lease-only'), { op: 'heartbeat', node: 'n1', mode: 'lease-only' });
    assert.deepEqual(parseSimCommand('cordon n1'), { op: 'cordon', node: 'n1' });
    assert.deepEqual(parseSimCommand('shutdown n1'), { op: 'shutdown', node: 'n1' });
    assert.deepEqual(parseSimCommand('nodes'), { op: 'nodes' });
    assert.deepEqual(parseSimCommand('nodes zone-a'), { op: 'nodes', zone: 'zone-a' });
    assert.deepEqual(parseSimCommand('stats'), { op: 'stats' });
    assert.deepEqual(parseSimCommand('exit'), { op: 'quit' });
    assert.deepEqual(parseSimCommand(''), { op: 'noop' });
    assert.deepEqual(parseSimCommand('# a comment'), { op: 'noop' });
  });

  test('rejects unknown commands and wrong arguments with one-line messages', () => {
    for (const line of ['explode n1', 'kill', 'kill a b', 'pressure n1 Memory maybe', 'pressure n1 Heat on', 'heartbeat n1 none', 'stats now']) {
      assert.throws(
        () => parseSimCommand(line),
        (e: unknown) => e instanceof CommandSyntaxError && !e.message.includes('\n'),
        line,
      );
    }
  });

  test('formatStats prints counts and lag on one line', () => {
    const lag = { p50: 1.2, p99: 9.6, max: 20, samples: 7 };
    const line = formatStats({
      nodes: 30,
      liveNodes: 29,
      pods: 150,
      leaseRenewals: 900,
      statusPosts: 90,
      errors: 1,
      podDeletionsConfirmed: 0,
      heartbeatLagMs: lag,
      leaseLagMs: lag,
      statusLagMs: lag,
      writeLatencyMs: lag,
      lateHeartbeats: 0,
      queuedWrites: 3,
      inFlightWrites: 2,
      windowMs: 60_000,
    });
    assert.ok(!line.includes('\n'));
    assert.match(line, /nodes 29\/30 live/);
    assert.match(line, /p50 1ms p99 10ms max 20ms/);
    assert.match(line, /errors 1/);
  });
});

describe('sim CLI input validation', () => {
  async function run(args: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runSimCommand(args, { out: (l) => void out.push(l), err: (l) => void err.push(l) });
    return { code, out, err };
  }

  test('an unknown flag prints one line naming it and exits 2', async () => {
    const r = await run(['--no-such-flag']);
    assert.equal(r.code, 2);
    assert.deepEqual(r.err, ['error: unknown argument --no-such-flag (see --help)']);
  });

  test('bad values exit 2 with a one-line message naming the flag', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--zone', '3'], /--zone\b/],
      [['--zones', 'many'], /--zones: must be an integer/],
      [['--nodes-per-zone', '0'], /--nodes-per-zone/],
      [['--lease-renew-interval', '10'], /--lease-renew-interval: invalid duration "10"/],
      [['--lease-duration', '1.5s'], /whole seconds/],
      [['--duration', 'soon'], /--duration/],
      [['--mix-pvc', '-1'], /--mix-pvc/],
      [['--prefix', 'Bad_Prefix'], /fleet prefix/],
      [['--log-level', 'loud'], /log-level/],
      [['stray-positional'], /stray-positional/],
    ];
    for (const [args, pattern] of cases) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.err.length, 1, args.join(' '));
      assert.match(r.err[0] as string, pattern);
      assert.ok(!(r.err[0] as string).includes('\n'));
    }
  });

  test('a leading "sim" word is accepted, as main.ts may pass it', async () => {
    const r = await run(['sim', '--bogus']);
    assert.equal(r.code, 2);
    assert.match(r.err[0] as string, /--bogus/);
  });
});
