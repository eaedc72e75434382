/**
 * The start-up second-actor check (src/secondactor/): the pure judgement of one Event (ours vs
 * theirs, before/inside/after the window, watched sources or not) and the shell's behaviour (one
 * warning per foreign actor, one Warning Event, the counter, a look every 30 s for 5 minutes only,
 * never anything else).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/log/logger.js';
import { readEventList, SecondActorCheck, toObservedEvent } from '../../src/secondactor/check.js';
import { SECOND_ACTOR_POLL_MS, SECOND_ACTOR_REASON, SECOND_ACTOR_WINDOW_MS, secondActorEvidence, type ObservedEvent } from '../../src/secondactor/decision.js';
import { FakeClock } from '../../src/util/clock.js';
import { RecordingEventSink } from '../../src/inmemory/events.js';

const OURS = 'nlc-7d9f_0b5c1c9e-1111-4222-8333-444455556666';
const T0 = Date.UTC(2026, 10, 27, 8, 0, 0);

function ev(o: Partial<ObservedEvent> = {}): ObservedEvent {
  return {
    component: 'taint-eviction-controller',
    instance: '',
    reason: 'TaintManagerEviction',
    timeMs: T0 + 60_000,
    involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' },
    ...o,
  };
}

describe('secondActorEvidence: one Event', () => {
  const rows: { name: string; e: ObservedEvent; theirs: boolean }[] = [
    { name: 'kube-controller-manager taint eviction (no instance) inside the window', e: ev(), theirs: true },
    { name: 'kube-controller-manager node-controller NodeNotReady on a node', e: ev({ component: 'node-controller', reason: 'NodeNotReady', involvedObject: { kind: 'Node', name: 'n1', uid: 'n' } }), theirs: true },
    { name: '1.20 legacy eviction (node-controller NodeControllerEviction)', e: ev({ component: 'node-controller', reason: 'NodeControllerEviction' }), theirs: true },
    { name: '1.20 taint manager (taint-controller)', e: ev({ component: 'taint-controller' }), theirs: true },
    { name: 'another copy of this program (another instance) doing pod GC', e: ev({ component: 'pod-garbage-collector', instance: 'nlc-other_9', reason: 'ForceDeletedOrphan' }), theirs: true },
    { name: 'ours (our identity as instance)', e: ev({ instance: OURS }), theirs: false },
    { name: 'ours, node-controller', e: ev({ component: 'node-controller', instance: OURS, reason: 'NodeNotReady' }), theirs: false },
    { name: 'before we started acting (history: the old leader, or kube-controller-manager before the cut-over)', e: ev({ timeMs: T0 - 1 }), theirs: false },
    { name: 'at the window start', e: ev({ timeMs: T0 }), theirs: true },
    { name: 'at the window end', e: ev({ timeMs: T0 + SECOND_ACTOR_WINDOW_MS }), theirs: true },
    { name: 'after the window', e: ev({ timeMs: T0 + SECOND_ACTOR_WINDOW_MS + 1 }), theirs: false },
    { name: 'no time at all', e: ev({ timeMs: undefined }), theirs: false },
    { name: 'a source that makes none of our decisions (kubelet)', e: ev({ component: 'kubelet', reason: 'Killing' }), theirs: false },
    { name: 'the attach/detach controller (kube-controller-manager keeps it on)', e: ev({ component: 'attachdetach-controller', reason: 'SuccessfulAttachVolume' }), theirs: false },
  ];
  for (const r of rows) {
    test(r.name, () => {
      const got = secondActorEvidence(r.e, OURS, T0);
      assert.equal(got !== undefined, r.theirs);
      if (got) assert.equal(got.component, r.e.component);
    });
  }
});

describe('SecondActorCheck', () => {
  function harness(lists: Record<string, ObservedEvent[]>) {
    const clock = new FakeClock(T0);
    const events = new RecordingEventSink(clock);
    const counts: string[] = [];
    const asked: string[] = [];
    const check = new SecondActorCheck({
      identity: OURS,
      clock,
      log: silentLogger,
      listEvents: (c) => {
        asked.push(c);
        return Promise.resolve({ events: lists[c] ?? [], malformed: 0 });
      },
      events,
      suspected: { inc: ({ component }) => counts.push(component) },
    });
    return { clock, events, counts, asked, check };
  }
  const settle = async (clock: FakeClock, ms = 0): Promise<void> => {
    await clock.advanceAsync(ms);
    for (let i = 0; i < 5; i++) await clock.advanceAsync(0);
  };

  test('one warning per foreign actor: one Warning Event naming the evidence, the counter per actor, ours ignored', async () => {
    const h = harness({
      'taint-eviction-controller': [ev(), ev({ involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'shop', uid: 'u2' } }), ev({ instance: OURS })],
      'node-controller': [ev({ component: 'node-controller', reason: 'NodeNotReady', involvedObject: { kind: 'Node', name: 'n1', uid: 'n' } })],
    });
    h.check.start();
    await settle(h.clock);
    assert.deepEqual(h.asked, [], 'no look at once: nothing recorded after the start can be there yet');
    await settle(h.clock, SECOND_ACTOR_POLL_MS);
    assert.deepEqual(h.counts.sort(), ['node-controller', 'taint-eviction-controller']);
    assert.deepEqual(h.check.seen().sort(), ['node-controller/', 'taint-eviction-controller/']);
    const warnings = h.events.list.filter((e) => e.reason === SECOND_ACTOR_REASON);
    assert.equal(warnings.length, 1, 'one Warning Event per run');
    assert.equal(warnings[0]?.type, 'Warning');
    assert.match(warnings[0]?.message ?? '', /node-controller .*recorded NodeNotReady on Node n1 at /, 'the first evidence seen (node-controller is looked at first)');
    // The same actors again on the next look: nothing new.
    await settle(h.clock, SECOND_ACTOR_POLL_MS);
    assert.equal(h.counts.length, 2);
    h.check.stop();
  });

  test('looks every 30 s for 5 minutes, then never again; only our own Events: silent', async () => {
    const h = harness({ 'node-controller': [ev({ component: 'node-controller', instance: OURS })] });
    h.check.start();
    await settle(h.clock, SECOND_ACTOR_WINDOW_MS + 10 * SECOND_ACTOR_POLL_MS);
    const looks = h.asked.filter((c) => c === 'node-controller').length;
    assert.equal(looks, SECOND_ACTOR_WINDOW_MS / SECOND_ACTOR_POLL_MS, 'every 30 s from 30 s in up to the window end');
    assert.equal(h.counts.length, 0);
    assert.equal(h.events.list.length, 0);
  });

  test('a failed list is tried again on the next look, and stop() ends it', async () => {
    const clock = new FakeClock(T0);
    let calls = 0;
    const counts: string[] = [];
    const check = new SecondActorCheck({
      identity: OURS,
      clock,
      log: silentLogger,
      listEvents: (c) => {
        calls++;
        if (calls <= 4) return Promise.reject(new Error('503'));
        return Promise.resolve({ events: c === 'taint-eviction-controller' ? [ev()] : [], malformed: 0 });
      },
      events: new RecordingEventSink(clock),
      suspected: { inc: ({ component }) => counts.push(component) },
    });
    check.start();
    await settle(clock, SECOND_ACTOR_POLL_MS);
    assert.equal(calls, 4, 'the first look, 30 s in, failed for every source');
    assert.deepEqual(counts, []);
    await settle(clock, SECOND_ACTOR_POLL_MS);
    assert.deepEqual(counts, ['taint-eviction-controller']);
    check.stop();
    const before = calls;
    await settle(clock, 3 * SECOND_ACTOR_POLL_MS);
    assert.equal(calls, before, 'no look after stop()');
  });

  test('toObservedEvent reads kube-controller-manager\'s core/v1 Event (no instance) and ours', () => {
    const theirs = toObservedEvent({
      metadata: { name: 'x' },
      involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' },
      reason: 'TaintManagerEviction',
      source: { component: 'taint-eviction-controller' },
      lastTimestamp: new Date(T0 + 5000),
    });
    assert.deepEqual(theirs, { component: 'taint-eviction-controller', instance: '', reason: 'TaintManagerEviction', timeMs: T0 + 5000, involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' } });
    const ours = toObservedEvent({
      metadata: { name: 'y' },
      involvedObject: { kind: 'Node', name: 'n1', uid: 'n' },
      reason: 'NodeNotReady',
      source: { component: 'node-controller', host: OURS },
      reportingComponent: 'node-controller',
      reportingInstance: OURS,
      eventTime: new Date(T0 + 7000),
    });
    assert.equal(ours?.instance, OURS);
    assert.equal(ours?.timeMs, T0 + 7000);
    assert.equal(ours && secondActorEvidence(ours, OURS, T0), undefined);
  });

  test('readEventList reads the API server\'s JSON (times as strings) and skips malformed items', () => {
    const read = readEventList({
      kind: 'EventList',
      items: [
        {
          metadata: { name: 'web-0.1' },
          involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' },
          reason: 'TaintManagerEviction',
          source: { component: 'taint-eviction-controller' },
          firstTimestamp: new Date(T0 + 1000).toISOString(),
          lastTimestamp: new Date(T0 + 5000).toISOString(),
        },
        { metadata: { name: 'broken' }, reason: 'NodeNotReady' },
        'not an object',
        {
          involvedObject: { kind: 'Node', name: 'n1', uid: 'n' },
          reason: 'NodeNotReady',
          reportingComponent: 'node-controller',
          reportingInstance: 'other-replica',
          eventTime: new Date(T0 + 7000).toISOString().replace('Z', '123Z'),
        },
      ],
    });
    assert.equal(read.malformed, 2);
    assert.deepEqual(read.events[0], { component: 'taint-eviction-controller', instance: '', reason: 'TaintManagerEviction', timeMs: T0 + 5000, involvedObject: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' } });
    assert.equal(read.events[1]?.component, 'node-controller');
    assert.equal(read.events[1]?.instance, 'other-replica');
    assert.equal(read.events[1]?.timeMs, T0 + 7000, 'a MicroTime eventTime');
    assert.deepEqual(readEventList({ kind: 'Status' }), { events: [], malformed: 1 }, 'a body that is not a list');
  });

  test('a malformed Event is evidence of nothing: skipped, and the next Event still counts', async () => {
    const clock = new FakeClock(T0);
    const counts: string[] = [];
    const check = new SecondActorCheck({
      identity: OURS,
      clock,
      log: silentLogger,
      listEvents: (c) =>
        Promise.resolve(c === 'taint-eviction-controller' ? readEventList({ items: [{ reason: 'TaintManagerEviction', source: { component: c } }, { involvedObject: { kind: 'Pod', name: 'p', uid: 'u' }, source: { component: c }, reason: 'TaintManagerEviction', lastTimestamp: new Date(T0 + 10_000).toISOString() }] }) : { events: [], malformed: 0 }),
      events: new RecordingEventSink(clock),
      suspected: { inc: ({ component }) => counts.push(component) },
    });
    check.start();
    await settle(clock, SECOND_ACTOR_POLL_MS);
    assert.deepEqual(counts, ['taint-eviction-controller']);
    check.stop();
  });
});
