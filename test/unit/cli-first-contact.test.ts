/**
 * What a user meets first on the command line (issue 56, item 6): a missing `--kubeconfig` file is
 * named by its flag, an unknown flag or command gets the nearest known one, and `--help` lists the
 * commands. Every bad input still ends in one line and exit 2 (a missing file: exit 1, as a start-up
 * failure; docs/migration.md), as the project's rule for invalid input says.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/program.js';
import { runPlugin } from '../../src/cli/plugin.js';
import { controllerFlagsHelp } from '../../src/cli/flags.js';
import { PROGRAM_COMMANDS } from '../../src/cli/commands.js';
import { editDistance, nearestName } from '../../src/util/nearest.js';

/** Runs `fn` with stdout and stderr captured. */
async function captured(fn: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [stdout, stderr] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((c: string | Uint8Array) => (out.push(String(c)), true)) as typeof process.stdout.write;
  process.stderr.write = ((c: string | Uint8Array) => (err.push(String(c)), true)) as typeof process.stderr.write;
  try {
    return { code: await fn(), out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}

/** One line on stderr, nothing on stdout, exit `code`. */
function assertOneLine(r: { code: number; out: string; err: string }, code: number, line: string | RegExp): void {
  assert.equal(r.code, code, r.err);
  assert.equal(r.out, '');
  assert.equal(r.err.split('\n').length, 2, `one line: ${JSON.stringify(r.err)}`);
  if (typeof line === 'string') assert.equal(r.err, `${line}\n`);
  else assert.match(r.err, line);
}

describe('nearest name', () => {
  test('Levenshtein distance', () => {
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('endpont', 'endpoint'), 1);
    assert.equal(editDistance('same', 'same'), 0);
  });

  test('suggests only what looks like a typo: one edit up to 4 letters, two up to 8, three beyond', () => {
    const flags = ['endpoint', 'kubeconfig', 'node-monitor-grace-period', 'port', 'lease'];
    assert.equal(nearestName('endpont', flags), 'endpoint');
    assert.equal(nearestName('kubconfig', flags), 'kubeconfig');
    assert.equal(nearestName('node-monitor-grace-perod', flags), 'node-monitor-grace-period');
    assert.equal(nearestName('prot', flags), undefined, 'two edits in a 4-letter word is another word');
    assert.equal(nearestName('cluster-cidr', flags), undefined, "kube-controller-manager's other flags get no guess");
    assert.equal(nearestName('lease', flags), undefined, 'a known name is no typo');
  });
});

describe('unknown flags and commands: one line, exit 2, the nearest known one', () => {
  test('run: --node-monitor-grace-perod', async () => {
    assertOneLine(await captured(() => main(['--node-monitor-grace-perod=5s'])), 2, 'node-lifecycle-controller: unknown flag: --node-monitor-grace-perod (did you mean --node-monitor-grace-period?)');
    assertOneLine(await captured(() => main(['run', '--kubconfig', 'x'])), 2, 'node-lifecycle-controller: unknown flag: --kubconfig (did you mean --kubeconfig?)');
    assertOneLine(await captured(() => main(['--cluster-cidr=10.0.0.0/8'])), 2, 'node-lifecycle-controller: unknown flag: --cluster-cidr');
  });

  test('status, explain, shadow-report (with its own flags) and what-if (with its own flags)', async () => {
    assertOneLine(await captured(() => main(['status', '--endpont', 'http://x'])), 2, 'node-lifecycle-controller: unknown flag: --endpont (did you mean --endpoint?)');
    assertOneLine(await captured(() => main(['explain', 'node', 'n1', '--namspace=x'])), 2, 'node-lifecycle-controller: unknown flag: --namspace (did you mean --namespace?)');
    assertOneLine(await captured(() => main(['shadow-report', '--tolerence', '5s'])), 2, 'node-lifecycle-controller: unknown flag: --tolerence (did you mean --tolerance?)');
    assertOneLine(await captured(() => main(['what-if', '--scenaro', 'x.yaml'])), 2, 'node-lifecycle-controller: unknown flag: --scenaro (did you mean --scenario?)');
  });

  test('a mistyped command; the plugin\'s too', async () => {
    assertOneLine(await captured(() => main(['stauts'])), 2, /^node-lifecycle-controller: unknown command "stauts" \(did you mean status\?; want run, status, explain, shadow-report, what-if or completion; see node-lifecycle-controller --help\)\n$/);
    assertOneLine(await captured(() => runPlugin(['expalin', 'node', 'x'])), 2, /^kubectl node-lifecycle: unknown command "expalin" \(did you mean explain\?; want status, explain, shadow-report or what-if; see kubectl node-lifecycle --help\)\n$/);
    // A word that is no near command still reaches `run`, which takes flags only.
    assertOneLine(await captured(() => main(['kubernetes'])), 2, /^node-lifecycle-controller: unexpected argument\(s\) kubernetes: node-lifecycle-controller takes flags only\n$/);
  });
});

describe('a missing kubeconfig is named by where it came from', () => {
  test('--kubeconfig of status and of run: one line naming the flag and the file', async () => {
    assertOneLine(await captured(() => main(['status', '--kubeconfig', '/nonexistent/kc'])), 1, 'node-lifecycle-controller: --kubeconfig: cannot read "/nonexistent/kc": no such file or directory');
    assertOneLine(
      await captured(() => main(['--kubeconfig=/nonexistent/kc', '--leader-elect=false', '--secure-port=0'])),
      1,
      'node-lifecycle-controller: --kubeconfig: cannot read "/nonexistent/kc": no such file or directory',
    );
  });

  test('$KUBECONFIG, when no flag names one', async () => {
    const saved = process.env['KUBECONFIG'];
    process.env['KUBECONFIG'] = '/nonexistent/from-env';
    try {
      assertOneLine(await captured(() => main(['status'])), 1, 'node-lifecycle-controller: $KUBECONFIG (/nonexistent/from-env): no such file or directory');
    } finally {
      if (saved === undefined) delete process.env['KUBECONFIG'];
      else process.env['KUBECONFIG'] = saved;
    }
  });
});

describe('--help lists the commands', () => {
  test('node-lifecycle-controller --help (and run --help): status, explain, shadow-report, what-if, with the flags', async () => {
    const help = controllerFlagsHelp();
    const commands = help.slice(help.indexOf('Commands:'), help.indexOf('Options:'));
    for (const name of ['run', 'status', 'explain', 'shadow-report', 'what-if', 'completion']) {
      assert.match(commands, new RegExp(`^ {2}node-lifecycle-controller ${name} +\\S`, 'm'), name);
    }
    assert.deepEqual(PROGRAM_COMMANDS.map((c) => c.name), ['run', 'status', 'explain', 'shadow-report', 'what-if', 'completion']);
    assert.match(help, /--node-monitor-grace-period/, 'the flags follow');
    const r = await captured(() => main(['--help']));
    assert.equal(r.code, 0);
    assert.equal(r.out, `${help}\n`);
  });
});
