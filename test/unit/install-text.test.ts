/**
 * The install texts (README.md, the chart README and the chart's NOTES.txt) tell users which
 * kube-controller-manager loops to switch off. They must show exactly the `--controllers` values the
 * program prints in `--help`: a text that forgets pod GC makes two pod GC loops run (issue 17, item 1).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeControllerManagerDisableFlags } from '../../src/controllers/names.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TEXTS = ['README.md', 'charts/node-lifecycle-controller/README.md', 'charts/node-lifecycle-controller/templates/NOTES.txt'];

/**
 * Every `--controllers=*,-…` value in a text, except README's `--controllers=*,-persistentvolume-attach-detach-controller`,
 * which is a flag of ours (leave force detach to kube-controller-manager), not one for kube-controller-manager.
 */
const disableFlagsIn = (text: string): string[] =>
  [...text.matchAll(/--controllers=\*,-[a-z,-]+/g)].map((m) => m[0]).filter((v) => v !== '--controllers=*,-persistentvolume-attach-detach-controller');

describe('kube-controller-manager --controllers in the install texts', () => {
  // The program itself, as a user runs it: `node-lifecycle-controller --help`.
  const help = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), '--help'], { cwd: ROOT, encoding: 'utf8' });
  const printed = disableFlagsIn(help.stdout);

  test('the program prints the canonical (1.29+) and short (1.20-1.28) lists, pod GC included', () => {
    assert.equal(help.status, 0, help.stderr);
    const { canonical, short } = kubeControllerManagerDisableFlags();
    assert.deepEqual(printed, [canonical, short]);
    assert.match(canonical, /-pod-garbage-collector-controller/);
    assert.match(short, /-podgc/);
    assert.doesNotMatch(canonical + short, /attach/, "KCM's attach/detach controller must stay on");
  });

  for (const file of TEXTS) {
    test(`${file} shows exactly the lists the program prints`, () => {
      const found = disableFlagsIn(readFileSync(join(ROOT, file), 'utf8'));
      assert.deepEqual([...new Set(found)].sort(), [...printed].sort(), `${file}: ${found.join(' | ')}`);
    });
  }
});
