/**
 * The tests' command runner (test/support/command.ts): a child that exits without reading its
 * stdin must not fail the test with EPIPE (CI, release.test.ts, on a loaded machine) — its exit code
 * and output say how it ended.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCommand } from '../support/command.js';
import { runCommand as runOrThrow } from '../support/process.js';

// 8 MiB is far more than a pipe buffer holds, so the write is still pending when the child exits
// and the EPIPE is certain, not a race.
const BIG = 'x'.repeat(8 << 20);

test('a child that exits without reading a large stdin: its exit code, no EPIPE', async () => {
  const r = await runCommand('sh', ['-c', 'echo out; echo err >&2; exit 3'], { input: BIG });
  assert.equal(r.code, 3);
  assert.equal(r.stdout, 'out\n');
  assert.equal(r.stderr, 'err\n');
});

test('a child that reads its stdin gets all of it', async () => {
  const r = await runCommand('wc', ['-c'], { input: BIG });
  assert.equal(r.code, 0);
  assert.equal(Number(r.stdout.trim()), BIG.length);
});

test('the throwing wrapper: stdout on exit 0, stderr in the error otherwise, and no EPIPE', async () => {
  assert.equal(await runOrThrow('sh', ['-c', 'echo ok'], BIG), 'ok\n');
  await assert.rejects(runOrThrow('sh', ['-c', 'echo bad >&2; exit 4'], BIG), /exited 4:\nbad/);
});

test('a command that cannot be spawned rejects', async () => {
  await assert.rejects(runCommand('/nonexistent/command', []), /ENOENT/);
});
