/**
 * The silent-Ready count's pure bound (src/nodelifecycle/silence.ts), case by case: the figures,
 * the boundaries and the log lines that test/unit/nodelifecycle-silentready.test.ts exercises only
 * through the controller shell. Pinned by mutation testing (docs/safety.md, "Mutation testing"):
 * a count that fires earlier would pause or slow tainting on a healthy cluster, one that never fires
 * would count nodes that died together as Ready.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../../src/log/logger.js';
import {
  DEFAULT_LEASE_DURATION_SECONDS,
  KUBELET_RENEW_FRACTION,
  KUBELET_RENEW_JITTER,
  RENEWAL_LAG_MARGIN_MS,
  SilentReadyCount,
  normalRenewalGapMs,
  silentAfterMs,
  withSilentCount,
} from '../../src/nodelifecycle/silence.js';
import type { DisruptionPause } from '../../src/nodelifecycle/zones.js';

interface LogLine {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

function recordingLogger(lines: LogLine[]): Logger {
  const at =
    (level: string) =>
    (obj: object, msg: string): void => {
      lines.push({ level, obj: obj as Record<string, unknown>, msg });
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('silence.ts constants and normalRenewalGapMs', () => {
  test("the kubelet's figures: a quarter of the Lease, 4 % jitter, a 2 s margin, a 40 s default Lease", () => {
    assert.equal(KUBELET_RENEW_FRACTION, 0.25);
    assert.equal(KUBELET_RENEW_JITTER, 0.04);
    assert.equal(RENEWAL_LAG_MARGIN_MS, 2000);
    assert.equal(DEFAULT_LEASE_DURATION_SECONDS, 40);
  });

  test('normalRenewalGapMs: 12,400 ms for a 40 s Lease, 7,200 ms for 20 s', () => {
    assert.equal(normalRenewalGapMs(40), 12_400);
    assert.equal(normalRenewalGapMs(20), 7_200);
  });

  test('normalRenewalGapMs: an absent, zero or negative duration means the 40 s default; 1 s is taken as given', () => {
    assert.equal(normalRenewalGapMs(undefined), 12_400);
    assert.equal(normalRenewalGapMs(0), 12_400);
    assert.equal(normalRenewalGapMs(-5), 12_400);
    assert.equal(normalRenewalGapMs(1), 2_260);
  });
});

describe('silentAfterMs', () => {
  test('the larger of half the grace period and the normal renewal gap', () => {
    assert.equal(silentAfterMs(50_000, 40), 25_000);
    assert.equal(silentAfterMs(20_000, 40), 12_400);
  });

  test('off (undefined) where the threshold is not shorter than the grace period, also at exact equality', () => {
    assert.equal(silentAfterMs(12_400, 40), undefined);
    assert.equal(silentAfterMs(12_000, 40), undefined);
    assert.equal(silentAfterMs(12_401, 40), 12_400);
  });
});

describe('SilentReadyCount', () => {
  test('isSilent: strictly older than the threshold', () => {
    const c = new SilentReadyCount(50_000, recordingLogger([]));
    assert.equal(c.isSilent(25_000, 40), false);
    assert.equal(c.isSilent(25_001, 40), true);
    assert.equal(c.isSilent(0, 40), false);
  });

  test('isSilent where the count is off: false, logged once per Lease duration (the default for none)', () => {
    const lines: LogLine[] = [];
    const c = new SilentReadyCount(10_000, recordingLogger(lines));
    assert.equal(c.isSilent(1_000_000, undefined), false);
    assert.equal(c.isSilent(1_000_000, 0), false);
    assert.equal(c.isSilent(1_000_000, 40), false);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.level, 'info');
    assert.deepEqual(lines[0]?.obj, { leaseDurationSeconds: 40, nodeMonitorGracePeriodSeconds: 10, normalRenewalGapSeconds: 12.4 });
    assert.match(lines[0]?.msg ?? '', /^The silent-Ready count is off for nodes with this Lease duration: the grace period is not longer than the gap between two normal Lease renewals \(a quarter of the Lease duration, plus jitter and a 2 s margin\), so a silent node cannot be told from a healthy one; such a Ready node counts as Ready for zone states until the grace period judges it$/);
    // A 60 s Lease at the same grace period: off too, said once more.
    assert.equal(c.isSilent(1_000_000, 60), false);
    assert.equal(lines.length, 2);
    assert.equal(lines[1]?.obj.leaseDurationSeconds, 60);
  });

  test('logIfOff: says it at start only where the default 40 s Lease is off', () => {
    const off: LogLine[] = [];
    new SilentReadyCount(12_400, recordingLogger(off)).logIfOff();
    assert.equal(off.length, 1);
    const on: LogLine[] = [];
    new SilentReadyCount(40_000, recordingLogger(on)).logIfOff();
    assert.equal(on.length, 0);
  });
});

describe('withSilentCount', () => {
  const zonePause: DisruptionPause = { kind: 'zone-stopped', zone: 'a', reason: 'Zone a is down.' };
  const listA = ['True', 'Unknown'];
  const listB = ['Unknown'];

  test('a zone decided on the statuses with silent nodes counted says how many', () => {
    const out = withSilentCount(zonePause, new Map([['a', listA]]), new Map([['a', listA]]), new Map(), new Map([['a', 2]]));
    assert.equal(
      out.reason,
      'Zone a is down. 2 of the nodes counted not Ready still report Ready but have sent no heartbeat for longer than their ' +
        "kubelet's Lease renewals allow (and at least half the grace period), so they are counted with the nodes that died with " +
        'them (this may only pause or slow tainting).',
    );
    assert.equal(out.kind, 'zone-stopped');
    assert.equal(out.zone, 'a');
  });

  test("legacy mode: the 1.20 view's effective list counts too", () => {
    const out = withSilentCount(zonePause, new Map([['a', listA]]), new Map([['a', ['True']]]), new Map([['a', listA]]), new Map([['a', 1]]));
    assert.match(out.reason, /^Zone a is down\. 1 of the nodes/);
  });

  test('a zone decided on the real statuses adds nothing (the same object back)', () => {
    assert.equal(withSilentCount(zonePause, new Map([['a', listA]]), new Map([['a', ['True', 'True']]]), new Map(), new Map([['a', 2]])), zonePause);
    assert.equal(withSilentCount(zonePause, new Map([['a', listA]]), new Map([['a', listA]]), new Map(), new Map()), zonePause);
    assert.equal(withSilentCount(zonePause, new Map(), new Map([['a', listA]]), new Map(), new Map([['a', 2]])), zonePause);
  });

  test('a pause of all zones counts every zone it was decided on; only the named zone otherwise', () => {
    const all: DisruptionPause = { kind: 'all-zones-stopped', reason: 'All zones are down.' };
    const chosen = new Map([
      ['a', listA],
      ['b', listB],
    ]);
    const effective = new Map([
      ['a', listA],
      ['b', listB],
    ]);
    const silent = new Map([
      ['a', 2],
      ['b', 3],
    ]);
    assert.match(withSilentCount(all, chosen, effective, new Map(), silent).reason, /^All zones are down\. 5 of the nodes/);
    assert.match(withSilentCount(zonePause, chosen, effective, new Map(), silent).reason, /^Zone a is down\. 2 of the nodes/);
  });

  test('all zones resumed is returned as it is', () => {
    const resumed: DisruptionPause = { kind: 'all-zones-resumed', reason: 'Resumed.' };
    assert.equal(withSilentCount(resumed, new Map([['a', listA]]), new Map([['a', listA]]), new Map(), new Map([['a', 2]])), resumed);
  });
});
