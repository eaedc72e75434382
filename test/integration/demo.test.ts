/**
 * Issue 8 acceptance: the demo runs end to end in non-TTY mode with a shortened scenario (as a
 * child process, on the shared control plane, which it must leave running), and its summary
 * matches the cluster's real state afterwards (`--keep` leaves the fleet for the checks).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Fleet } from '@node-lifecycle-controller/sim/fleet';
import type { DemoSummary } from '@node-lifecycle-controller/sim/demo-view';
import { getCondition, toNode, type Node } from '../../src/kube/objects.js';
import { testClients, uniquePrefix, waitFor } from '../support/cluster.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const clients = testClients();

describe('npm run demo, shortened, without a TTY (issue 8)', () => {
  const prefix = uniquePrefix('demo');
  const namespace = `nlc-${prefix}`;
  const summaryFile = join(tmpdir(), `${prefix}-summary.json`);

  after(async () => {
    // The demo ran with --keep: remove its fleet the way the demo itself would.
    // (A demo that failed early may not have created the namespace: nothing to clean then.)
    await new Fleet({ clients, prefix, namespace, zones: 3, nodesPerZone: 4, podsPerNode: 0 }).cleanup().catch(() => undefined);
  });

  test('power-loss, recover, memory-pressure: exit 0, plain lines, and a summary that matches the cluster', async () => {
    const logDir = process.env['NLC_TEST_LOG_DIR'] ?? tmpdir();
    const started = Date.now();
    const { stdout } = await run(
      join(root, 'node_modules/.bin/node'),
      [
        '--import',
        'tsx',
        'packages/sim/src/main.ts',
        'demo',
        '--nodes-per-zone',
        '4',
        '--scenario',
        'power-loss,recover,memory-pressure',
        '--prefix',
        prefix,
        '--keep',
        '--summary-json',
        summaryFile,
        '--log-file',
        join(logDir, `${prefix}.log`),
      ],
      { cwd: root, timeout: 170_000, maxBuffer: 16 * 1024 * 1024 },
    );
    assert.ok(Date.now() - started < 180_000, 'under 3 minutes with the control plane cached');
    // Non-TTY: plain timestamped lines, no cursor movement.
    assert.ok(!stdout.includes('\x1b['), 'no ANSI sequences without a TTY');
    assert.match(stdout, /^\d\d:\d\d:\d\d\.\d{3}Z +T\+\d+\.\ds {2}==> power-loss: /m);
    assert.match(stdout, /already up; it stays up afterwards/);
    assert.match(stdout, /^Summary: 3 step\(s\) in /m);

    const s = JSON.parse(await readFile(summaryFile, 'utf8')) as DemoSummary;
    assert.equal(s.ok, true, s.error ?? '');
    assert.deepEqual(s.steps.map((x) => [x.step, x.ok]), [['power-loss', true], ['recover', true], ['memory-pressure', true]]);
    const [power, recover, memory] = s.steps as [DemoSummary['steps'][number], DemoSummary['steps'][number], DemoSummary['steps'][number]];
    const victim = power.nodes[0] as string;
    assert.equal(recover.nodes[0], victim);

    // 1. The summary's taint and evictions are what the cluster recorded.
    assert.ok(power.taints.some((t) => t.node === victim && t.taint === 'node.kubernetes.io/unreachable:NoExecute'));
    assert.deepEqual(power.evictions.map((e) => e.tolerationSeconds).sort((a, b) => (a ?? 0) - (b ?? 0)), [10, 20]);
    for (const e of power.evictions) {
      // Deadlines count from the taint's whole-second timeAdded, so up to 1 s early, plus watch latency.
      assert.ok(Math.abs((e.afterTaintSeconds ?? 0) - (e.tolerationSeconds ?? 0)) <= 3, `${e.pod}: ${e.afterTaintSeconds} s after the taint`);
    }
    const podEvents = await clients.core.listNamespacedEvent({ namespace, fieldSelector: 'reason=TaintManagerEviction' });
    for (const e of power.evictions) {
      const name = e.pod.split('/')[1];
      assert.ok(
        podEvents.items.some((ev) => ev.involvedObject.name === name && ev.message === `Marking for deletion Pod ${e.pod}`),
        `a TaintManagerEviction event for ${e.pod}`,
      );
    }
    for (const p of power.pending) {
      assert.ok(podEvents.items.some((ev) => `${namespace}/${ev.involvedObject.name}` === p.pod && ev.message === `Cancelling deletion of Pod ${p.pod}`), `cancelled ${p.pod}`);
    }
    const nodeEvents = await clients.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${victim}` });
    assert.ok(nodeEvents.items.some((ev) => ev.reason === 'NodeNotReady'), 'a NodeNotReady event for the victim');
    // The evicted pods are gone (the revived kubelet confirmed their deletion).
    await waitFor('evicted pods gone', async () => {
      const pods = await clients.core.listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${victim}` });
      return power.evictions.every((e) => !pods.items.some((p) => `${namespace}/${p.metadata?.name}` === e.pod));
    }, 15_000);

    // 2. Recovered: Ready, and no NoExecute taint left.
    const v = toNode(await clients.core.readNode({ name: victim })) as Node;
    assert.equal(getCondition(v.conditions, 'Ready')?.status, 'True');
    assert.deepEqual(v.taints.filter((t) => t.effect === 'NoExecute'), []);

    // 3. MemoryPressure: the condition and the NoSchedule taint the summary reports are on the node.
    const m = toNode(await clients.core.readNode({ name: memory.nodes[0] as string })) as Node;
    assert.equal(getCondition(m.conditions, 'MemoryPressure')?.status, 'True');
    assert.deepEqual(memory.taints.map((t) => t.taint), ['node.kubernetes.io/memory-pressure:NoSchedule']);
    assert.ok(m.taints.some((t) => t.key === 'node.kubernetes.io/memory-pressure' && t.effect === 'NoSchedule'));

    // The printed kubectl command shows the same evictions from the cluster.
    const command = s.kubectl.find((c) => c.includes('reason=TaintManagerEviction')) as string;
    assert.ok(stdout.includes(command));
    const { stdout: kubectl } = await run('sh', ['-c', `${s.kubectl[0]}; ${command}`], { timeout: 30_000 });
    for (const e of power.evictions) assert.ok(kubectl.includes(`Marking for deletion Pod ${e.pod}`), `kubectl shows ${e.pod}`);

    // It did not tear down the shared control plane it did not start.
    const status = await run('bash', [join(root, 'scripts/control-plane.sh'), 'status']);
    assert.match(status.stdout, /kube-apiserver: ready/);
  });
});
