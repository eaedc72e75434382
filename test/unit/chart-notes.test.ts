/**
 * The chart's NOTES.txt names one actor per decision for the values given: in a dry-run (shadow)
 * release, kube-controller-manager keeps every loop; in an acting release, the `--controllers`
 * lines for kube-controller-manager switch off exactly the loops this release runs (by the same
 * first-entry-decides rule as the binary's isControllerEnabled), and it says who does pod GC and
 * each kind of forced detach (docs/migration.md, "The one-actor table"). Rendered with
 * `scripts/helm.sh template` through a copy of the chart that renders NOTES.txt.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chartWithNotes, renderChart, type ChartCopy } from '../support/chart.js';
import { isControllerEnabled } from '../../src/controllers/names.js';

let copy: ChartCopy | undefined;

/** NOTES.txt rendered with these `--set` values, whitespace runs folded to one space. */
async function notes(...set: string[]): Promise<string> {
  assert.ok(copy);
  const docs = await renderChart(copy.chart, 'nlc', set);
  const n = docs.find((d) => typeof d['notes'] === 'string')?.['notes'];
  assert.ok(typeof n === 'string' && n.length > 0, 'NOTES.txt rendered');
  return n.replace(/\s+/g, ' ');
}

/** The `--controllers=…` values NOTES gives kube-controller-manager, 1.29+ first. */
const kcmLines = (text: string): string[] => [...text.matchAll(/--controllers=\*[a-z,-]*/g)].map((m) => m[0]);

describe('chart NOTES.txt: who does what, for the values given', () => {
  before(async () => {
    copy = await chartWithNotes();
  });
  after(async () => {
    await copy?.remove();
  });

  test('dry-run: keep kube-controller-manager\'s controllers on; it does pod GC and forced detach; no --controllers line', async () => {
    const text = await notes('controller.dryRun=true');
    assert.match(text, /Keep kube-controller-manager's node lifecycle and taint eviction controllers \(and its pod garbage collector\) ON/);
    assert.match(text, /Pod GC: kube-controller-manager's pod-garbage-collector-controller does all four passes/);
    assert.match(text, /this shadow only records what it would force-delete/);
    assert.match(text, /Forced detach: kube-controller-manager's attach\/detach controller does it/);
    assert.match(text, /docs\/migration\.md/);
    assert.deepEqual(kcmLines(text), [], 'a shadow must not tell anyone to switch kube-controller-manager off');
    assert.doesNotMatch(text, /Pod GC: this release/);
  });

  test('acting with the defaults: all of KCM\'s loops off, ours does pod GC and the timeout detach; KCM needs --disable-force-detach-on-timeout', async () => {
    const text = await notes();
    assert.deepEqual(kcmLines(text), [
      '--controllers=*,-node-lifecycle-controller,-taint-eviction-controller,-pod-garbage-collector-controller',
      '--controllers=*,-nodelifecycle,-podgc',
    ]);
    assert.match(text, /kubeadm's is \*,bootstrapsigner,tokencleaner: keep those/);
    assert.match(text, /Pod GC: this release does all four passes \(terminated pods beyond --terminated-pod-gc-threshold/);
    assert.match(text, /Forced detach after timeout: this release, after 6m\. Set --disable-force-detach-on-timeout on kube-controller-manager \(1\.30\+\)/);
    assert.match(text, /Out-of-service detach: this release AND kube-controller-manager \(1\.26\+/);
    assert.doesNotMatch(text, /shadow/i);
  });

  test('acting with disableForceDetachOnTimeout: the timeout is kube-controller-manager\'s alone', async () => {
    const text = await notes('controller.disableForceDetachOnTimeout=true');
    assert.match(text, /Forced detach after timeout: kube-controller-manager's alone \(after 6 min; this release runs --disable-force-detach-on-timeout\)/);
    assert.doesNotMatch(text, /Forced detach after timeout: this release/);
  });

  test('acting without our attach/detach controller: forced detach is left to kube-controller-manager, one actor for both kinds', async () => {
    const text = await notes('controller.controllers=*\\,-persistentvolume-attach-detach-controller');
    assert.match(text, /Forced detach: left to kube-controller-manager \(this release's attach\/detach controller is off\)/);
    assert.match(text, /One actor for both/);
    assert.doesNotMatch(text, /this release AND kube-controller-manager/);
    assert.equal(kcmLines(text).length, 2);
  });

  // The chart's reading of controller.controllers must be the binary's: each list below is rendered
  // and the NOTES compared with isControllerEnabled (first entry naming a controller decides).
  const lists: string[][] = [
    ['*', '-pod-garbage-collector-controller'],
    ['-podgc', '*'],
    ['podgc', '-podgc', '*'],
    ['*', '-taint-eviction-controller'],
    ['pod-garbage-collector-controller'],
    ['node-lifecycle-controller', 'taint-eviction-controller', 'attachdetach'],
    ['persistentvolume-attach-detach-controller'],
  ];
  for (const list of lists) {
    test(`controller.controllers=[${list.join(', ')}]: the KCM lines and the pod GC / forced-detach statements follow the binary's rule`, async () => {
      const text = await notes(`controller.controllers={${list.join(',')}}`);
      const on = (name: string): boolean => isControllerEnabled({ controllers: list }, name);
      const lc = on('node-lifecycle-controller');
      const te = on('taint-eviction-controller');
      const gc = on('pod-garbage-collector-controller');
      const fd = on('persistentvolume-attach-detach-controller');
      if (!lc && !te && !gc) {
        assert.match(text, /runs none of the loops it could replace/);
        assert.deepEqual(kcmLines(text), []);
        return;
      }
      const canonical = `--controllers=*${lc ? ',-node-lifecycle-controller' : ''}${te ? ',-taint-eviction-controller' : ''}${gc ? ',-pod-garbage-collector-controller' : ''}`;
      const short = `--controllers=*${lc || te ? ',-nodelifecycle' : ''}${gc ? ',-podgc' : ''}`;
      assert.deepEqual(kcmLines(text), [canonical, short]);
      assert.equal(/Before 1\.29 taint eviction runs inside kube-controller-manager's nodelifecycle/.test(text), lc !== te);
      assert.match(text, gc ? /Pod GC: this release does all four passes/ : /Pod GC: off in this release .* keep kube-controller-manager's pod-garbage-collector-controller \(podgc\) ON/);
      assert.match(text, fd ? /Forced detach after timeout: this release/ : /Forced detach: left to kube-controller-manager/);
    });
  }
});
