/**
 * EventRecorder against the real kube-apiserver: Events show up where `kubectl get events` /
 * `kubectl describe` look, and a repeat is merged into the same Event (count 2).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { realClock } from '../../src/util/clock.js';
import type { KubeClients } from '../../src/kube/client.js';
import { EventRecorder, nodeRef, podRef } from '../../src/kube/events.js';
import type { Logger } from '../../src/log/logger.js';
import { ApiWriteThrottle } from '../../src/kube/throttle.js';
import { createTestNamespace, kubeconfigPath, testClients, uniquePrefix } from '../support/cluster.js';

const run = promisify(execFile);

const warnings: string[] = [];
const log: Logger = { debug: () => {}, info: () => {}, error: (_o, m) => void warnings.push(m), warn: (_o, m) => void warnings.push(m) };

describe('EventRecorder on the shared cluster', () => {
  let clients: KubeClients;
  let namespace: string;
  let throttle: ApiWriteThrottle;

  before(async () => {
    clients = testClients();
    namespace = uniquePrefix('ev');
    await createTestNamespace(clients, namespace);
    throttle = new ApiWriteThrottle({ qps: 20, burst: 30 });
  });
  after(async () => {
    await throttle.stop();
    await clients.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  test('a node event lands in namespace default and a repeat aggregates to count 2', async () => {
    const nodeName = `${namespace}-node`;
    const recorder = new EventRecorder({ clients, throttle, component: 'node-controller', clock: realClock, log });
    const ref = nodeRef({ name: nodeName, uid: `${nodeName}-uid` });
    const message = `Node ${nodeName} status is now: NodeNotReady`;
    recorder.record(ref, 'Normal', 'NodeNotReady', message);
    await recorder.flush();

    const fieldSelector = `involvedObject.kind=Node,involvedObject.name=${nodeName}`;
    let list = await clients.core.listNamespacedEvent({ namespace: 'default', fieldSelector });
    assert.equal(list.items.length, 1);
    const ev = list.items[0];
    assert.ok(ev);
    assert.equal(ev.reason, 'NodeNotReady');
    assert.equal(ev.message, message);
    assert.equal(ev.type, 'Normal');
    assert.equal(ev.count, 1);
    assert.equal(ev.source?.component, 'node-controller');
    assert.equal(ev.involvedObject.uid, `${nodeName}-uid`);
    assert.equal(ev.involvedObject.kind, 'Node');

    recorder.record(ref, 'Normal', 'NodeNotReady', message);
    await recorder.flush();
    list = await clients.core.listNamespacedEvent({ namespace: 'default', fieldSelector });
    assert.equal(list.items.length, 1, 'the repeat did not create a second Event');
    assert.equal(list.items[0]?.count, 2);
    assert.equal(list.items[0]?.metadata?.name, ev.metadata?.name);
    assert.deepEqual(recorder.recorded(), { recorded: 2, created: 1, patched: 1, dropped: 0, fenced: 0, failed: 0 });

    // What `kubectl get events` shows (kubectl's own client, so the object is what users see).
    const { stdout } = await run('kubectl', [
      '--kubeconfig',
      kubeconfigPath(),
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      `involvedObject.name=${nodeName}`,
      '-o',
      'jsonpath={range .items[*]}{.reason}/{.count}/{.source.component}{"\\n"}{end}',
    ]);
    assert.equal(stdout.trim(), 'NodeNotReady/2/node-controller');
    assert.deepEqual(warnings, []);
  });

  test('a pod event lands in the pod namespace with the taint-eviction-controller source', async () => {
    const recorder = new EventRecorder({ clients, throttle, component: 'taint-eviction-controller', clock: realClock, log });
    const pod = { namespace, name: 'victim', uid: 'victim-uid' };
    recorder.record(podRef(pod), 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${namespace}/victim`);
    await recorder.flush();
    const list = await clients.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=victim' });
    assert.equal(list.items.length, 1);
    assert.equal(list.items[0]?.source?.component, 'taint-eviction-controller');
    assert.equal(list.items[0]?.involvedObject.namespace, namespace);
    assert.equal(list.items[0]?.reason, 'TaintManagerEviction');
  });
});
