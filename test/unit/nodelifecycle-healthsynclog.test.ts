/**
 * The health queue's debug line, one per sync (src/nodelifecycle/monitor.ts `#syncNodeHealth`): by
 * what the node was queued (its deadline timer, a monitor pass, an event, or the queue's own retry),
 * how long it waited there, the time of its live Lease read, status write and reaction, and where it
 * ended. It exists to explain a late mark like the 2026-12-04 limits wave (bench/README.md,
 * 2026-12-05), so these tests pin what each field says on the real controller shell, driven by
 * FakeClock over the in-memory world (test/support/nodelifecycle-world.ts).
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../../src/log/logger.js';
import { DEFAULT_CONFIG, GRACE_MS, World } from '../support/nodelifecycle-world.js';

interface SyncLine {
  node: string;
  queuedBy: string;
  queuedMs: number;
  ms: number;
  end: string;
  liveReadMs?: number;
  writeMs?: number;
  actMs?: number;
}

/** A logger that keeps only the health syncs' debug lines. */
function syncLines(lines: SyncLine[]): Logger {
  const none = (): void => undefined;
  return {
    debug: (obj: object, msg: string) => {
      if (msg === 'node health sync done') lines.push(obj as SyncLine);
    },
    info: none,
    warn: none,
    error: none,
  };
}

/** A started world of `n` Ready nodes in zone a (one pod each), no kubelet renewing: each expires a grace period after its first sight. */
function world(t: TestContext, n: number): { w: World; lines: SyncLine[]; names: string[] } {
  const w = new World(DEFAULT_CONFIG);
  const lines: SyncLine[] = [];
  w.log = syncLines(lines);
  const names = Array.from({ length: n }, (_, i) => `node-${i}`);
  for (const name of names) {
    w.addNode(name, 'a');
    w.renew(name);
    w.putPod(`pod-${name}`, name);
  }
  w.build().start();
  t.after(() => w.ctl.stop());
  return { w, lines, names };
}

describe('the health sync debug line', () => {
  test('a node that expires between passes is queued by its deadline timer, read live, written and tainted, each stage timed', async (t) => {
    const { w, lines } = world(t, 1);
    // First sight at the start: the deadline is grace + 1 ms later, off the 5 s pass grid.
    await w.clock.advanceAsync(GRACE_MS + 1_000);
    const marked = lines.filter((l) => l.end === 'status written');
    assert.equal(marked.length, 1, JSON.stringify(lines));
    const line = marked[0]!;
    assert.equal(line.node, 'node-0');
    assert.equal(line.queuedBy, 'deadline');
    assert.equal(line.queuedMs, 0, 'a free worker takes it at once');
    assert.equal(typeof line.liveReadMs, 'number', 'the Lease circuit breaker read it live first');
    assert.equal(typeof line.writeMs, 'number');
    assert.equal(typeof line.actMs, 'number', 'the NoExecute taint was queued');
    assert.equal(w.nodes.get('node-0')?.conditions.find((c) => c.type === 'Ready')?.status, 'Unknown');
  });

  test('with more expired nodes than workers, the ones queued behind say how long they waited', async (t) => {
    const { w, lines, names } = world(t, 12);
    // Every status write waits 2 s: 8 workers take 8 nodes, the other 4 wait for a free one.
    w.statusWriteGate = () => new Promise((resolve) => w.clock.setTimeout(resolve, 2_000));
    await w.clock.advanceAsync(GRACE_MS + 4_900);
    const marked = lines.filter((l) => l.end === 'status written');
    assert.deepEqual(marked.map((l) => l.node).sort(), [...names].sort(), JSON.stringify(lines));
    for (const l of marked) assert.equal(l.queuedBy, 'deadline', JSON.stringify(l));
    const waited = marked.filter((l) => l.queuedMs > 0);
    assert.equal(waited.length, 4, JSON.stringify(marked));
    for (const l of waited) assert.ok(l.queuedMs >= 2_000, `queued behind a 2 s write: ${JSON.stringify(l)}`);
    for (const l of marked) assert.ok((l.writeMs ?? 0) >= 2_000, JSON.stringify(l));
  });

  test('a live Lease read that finds a newer Lease ends the sync held, with no write', async (t) => {
    const { w, lines } = world(t, 1);
    // The API server has a newer version of the Lease than the cache saw renew (a change that is not
    // a renewal, which the cache has not caught up with): the breaker holds the node.
    const key = 'kube-node-lease/node-0';
    const api = w.apiLeases.get(key);
    assert.ok(api);
    w.apiLeases.set(key, { ...api, resourceVersion: w.nextResourceVersion() });
    await w.clock.advanceAsync(GRACE_MS + 1_000);
    const held = lines.filter((l) => l.end === 'held by the live Lease read');
    assert.ok(held.length >= 1, JSON.stringify(lines));
    assert.equal(typeof held[0]!.liveReadMs, 'number');
    assert.equal(held[0]!.writeMs, undefined, 'no status write after a hold');
    assert.equal(lines.filter((l) => l.end === 'status written').length, 0);
  });
});
