/**
 * The controller registry (src/controllers/): every descriptor carries kube-controller-manager's
 * name and aliases; `run` and `what-if` build the same controllers for the same flags, because both
 * iterate the registry; node-affinity-enforcer runs in what-if when enabled and the report says so.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseControllerFlags } from '../../src/cli/flags.js';
import { startController } from '../../src/cli/run.js';
import { CONTROLLER_REGISTRY } from '../../src/controllers/table.js';
import { enabledControllers } from '../../src/controllers/registry.js';
import { canonicalControllerName } from '../../src/controllers/names.js';
import { createLogger } from '../../src/log/logger.js';
import { runWhatIf } from '../../src/whatif/run.js';
import { parseScenario } from '../../src/whatif/scenario.js';
import { syntheticSnapshot } from '../../src/whatif/synthetic.js';
import { whatIfJson, whatIfText } from '../../src/whatif/report.js';
import { HungServer, kubeconfigYaml } from '../support/hung-server.js';

/**
 * kube-controller-manager v1.37.2's descriptors of the controllers we replace: `name` from
 * `cmd/kube-controller-manager/names/controller_names.go`, `aliases` from `app/core.go`
 * (`newNodeLifecycleControllerDescriptor` and the others). Ours adds `attach-detach-controller`.
 */
const UPSTREAM: Record<string, readonly string[]> = {
  'node-lifecycle-controller': ['nodelifecycle'],
  'taint-eviction-controller': [],
  'pod-garbage-collector-controller': ['podgc'],
  'persistentvolume-attach-detach-controller': ['attachdetach'],
};

const FLAG_SETS: string[][] = [
  [],
  ['--controllers=*,node-affinity-enforcer'],
  ['--enable-taint-manager=false'],
  ['--controllers=nodelifecycle,podgc'],
  ['--controllers=*,-attachdetach,-taint-eviction-controller'],
  ['--controllers=node-affinity-enforcer'],
];

const quietLog = (): ReturnType<typeof createLogger> => createLogger({ level: 'error', format: 'json', destination: { write: () => undefined } });
const SCENARIO = 'duration: 30s\nsteps:\n  - at: 0s\n    action: stop-kubelet\n    nodes: [a-n0]\n';
const snapshot = (): ReturnType<typeof syntheticSnapshot> => syntheticSnapshot({ zones: ['a', 'b'], nodesPerZone: 2, podsPerNode: 2, daemonSetPods: true, volumeEvery: 1 });

describe('controller registry', () => {
  test("every descriptor has kube-controller-manager's name and aliases (ours: node-affinity-enforcer, off by default)", () => {
    assert.deepEqual(
      CONTROLLER_REGISTRY.map((d) => d.name),
      ['node-lifecycle-controller', 'taint-eviction-controller', 'pod-garbage-collector-controller', 'persistentvolume-attach-detach-controller', 'node-affinity-enforcer'],
    );
    for (const d of CONTROLLER_REGISTRY) {
      const upstream = UPSTREAM[d.name];
      if (upstream === undefined) {
        assert.equal('ourOwn' in d && d.ourOwn, true, `${d.name} is not kube-controller-manager's, so it must say it is ours`);
        assert.equal(d.disabledByDefault, true);
        continue;
      }
      const extra = d.name === 'persistentvolume-attach-detach-controller' ? ['attach-detach-controller'] : [];
      assert.deepEqual([...d.aliases], [...upstream, ...extra], d.name);
      assert.equal(d.disabledByDefault, false, d.name);
      for (const alias of d.aliases) assert.equal(canonicalControllerName(alias), d.name);
    }
  });

  test('each descriptor declares the caches its controller reads; keys are unique', () => {
    assert.equal(new Set(CONTROLLER_REGISTRY.map((d) => d.key)).size, CONTROLLER_REGISTRY.length);
    for (const d of CONTROLLER_REGISTRY) assert.ok(d.informers.includes('nodes'), `${d.name} reads nodes`);
    const byName = Object.fromEntries(CONTROLLER_REGISTRY.map((d) => [d.name, [...d.informers]]));
    assert.ok(byName['persistentvolume-attach-detach-controller']?.includes('volumeAttachments'));
    assert.ok(byName['node-affinity-enforcer']?.includes('affinityPods'));
  });

  describe('run and what-if enable the same controllers for the same flags', () => {
    let api: HungServer;
    let dir: string;
    let kubeconfig: string;
    before(async () => {
      // An API server that accepts connections and never answers: the caches never sync, so the
      // controllers are built (and exposed) but never started, and nothing is written.
      api = new HungServer();
      const port = await api.listen();
      dir = await mkdtemp(join(tmpdir(), 'nlc-registry-'));
      kubeconfig = join(dir, 'kubeconfig');
      await writeFile(kubeconfig, kubeconfigYaml(port));
    });
    after(async () => {
      await api.close();
      await rm(dir, { recursive: true, force: true });
    });

    for (const extra of FLAG_SETS) {
      test(`flags: ${extra.join(' ') || '(defaults)'}`, { timeout: 30_000 }, async () => {
        const config = await parseControllerFlags([`--kubeconfig=${kubeconfig}`, '--secure-port=0', '--leader-elect=false', ...extra], {});
        const expected = enabledControllers(config).map((d) => d.name);
        const running = await startController(config, { log: quietLog() });
        try {
          const ran = CONTROLLER_REGISTRY.filter((d) => running[d.key] !== undefined).map((d) => d.name);
          assert.deepEqual(ran, expected);
        } finally {
          await running.stop();
        }
        const r = await runWhatIf(snapshot(), parseScenario(SCENARIO, 's.yaml'), config);
        assert.deepEqual(r.controllers, expected);
        assert.deepEqual(
          r.controllersNotRun.map((c) => c.name),
          CONTROLLER_REGISTRY.map((d) => d.name).filter((n) => !expected.includes(n)),
        );
      });
    }
  });

  test('node-affinity-enforcer runs in what-if when enabled, and the text and JSON reports say which controllers ran', async () => {
    const on = await parseControllerFlags(['--controllers=*,node-affinity-enforcer'], {});
    const r = await runWhatIf(snapshot(), parseScenario(SCENARIO, 's.yaml'), on);
    assert.ok(r.controllers.includes('node-affinity-enforcer'));
    assert.match(whatIfText(r), /^Controllers: .*node-affinity-enforcer/m);
    assert.ok((JSON.parse(whatIfJson(r)) as { controllers: string[] }).controllers.includes('node-affinity-enforcer'));

    const off = await parseControllerFlags(['--enable-taint-manager=false'], {});
    const r2 = await runWhatIf(snapshot(), parseScenario(SCENARIO, 's.yaml'), off);
    assert.ok(!r2.controllers.includes('node-affinity-enforcer'));
    assert.match(whatIfText(r2), /^Not run: .*taint-eviction-controller \(--enable-taint-manager=false\).*node-affinity-enforcer \(off by default/m);
  });
});
