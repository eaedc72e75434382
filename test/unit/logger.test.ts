import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, forNode, forPod, formatTextLine, logLevelForVerbosity, type CreateLoggerOptions } from '../../src/log/logger.js';

/** Creates a logger that writes into an array of lines. */
function capture(opts: Omit<CreateLoggerOptions, 'destination'>): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger({ ...opts, destination: { write: (s: string) => void lines.push(s) } });
  return { log, lines };
}

describe('createLogger json', () => {
  test('writes one JSON object per line with a level label, ISO time and the message', () => {
    const { log, lines } = capture({ level: 'info', format: 'json' });
    log.info({ taint: 'node.kubernetes.io/unreachable:NoExecute' }, 'tainting node');
    assert.equal(lines.length, 1);
    const entry = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    assert.equal(entry['level'], 'info');
    assert.equal(entry['msg'], 'tainting node');
    assert.equal(entry['taint'], 'node.kubernetes.io/unreachable:NoExecute');
    assert.ok(!Number.isNaN(Date.parse(String(entry['time']))), 'time is an ISO timestamp');
  });

  test('respects the level', () => {
    const { log, lines } = capture({ level: 'warn', format: 'json' });
    log.info('hidden');
    log.debug('hidden');
    log.warn('shown');
    log.error({ err: new Error('boom') }, 'failed');
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as { msg: string }).msg), ['shown', 'failed']);
    const err = (JSON.parse(lines[1] ?? '') as { err: { message: string; type: string } }).err;
    assert.equal(err.message, 'boom');
    assert.equal(err.type, 'Error');
  });

  test('forNode / forPod bind the node, zone and pod fields', () => {
    const { log, lines } = capture({ level: 'trace', format: 'json' });
    forNode(log, 'n1', 'r\x00z').info('node line');
    forNode(log, 'n2').debug('no zone');
    forPod(log, { namespace: 'default', name: 'web-0' }).trace('pod line');
    forPod(log, 'kube-system/dns').info('pod key');
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(entries[0]?.['node'], 'n1');
    assert.equal(entries[0]?.['zone'], 'r\x00z');
    assert.equal(entries[1]?.['node'], 'n2');
    assert.ok(!('zone' in (entries[1] ?? {})));
    assert.equal(entries[2]?.['pod'], 'default/web-0');
    assert.equal(entries[3]?.['pod'], 'kube-system/dns');
  });
});

describe('createLogger text', () => {
  test('pino-pretty output is one readable, non-JSON line with the message and fields', () => {
    const { log, lines } = capture({ level: 'info', format: 'text' });
    forNode(log, 'n1').info('marking node unreachable');
    const text = lines.join('');
    assert.ok(text.includes('marking node unreachable'));
    assert.ok(text.includes('n1'));
    assert.throws(() => JSON.parse(text));
  });

  test('the built-in fallback formatter: time, LEVEL, message, key=value', () => {
    const { log, lines } = capture({ level: 'info', format: 'text', disablePrettyPrinter: true });
    forNode(log, 'n1', 'r\x00z').warn({ attempt: 2 }, 'patch failed');
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /^\d{4}-\d\d-\d\dT\S+Z WARN {2}patch failed node=n1 zone="r\\u0000z" attempt=2\n$/);
  });

  test('formatTextLine passes non-JSON input through unchanged (plus newline)', () => {
    assert.equal(formatTextLine('not json'), 'not json\n');
  });
});

describe('logLevelForVerbosity (kube-controller-manager -v)', () => {
  test('0-3 info, 4-5 debug, 6 and above trace; never above info, so warnings and errors always show', () => {
    const got = [0, 1, 2, 3, 4, 5, 6, 7, 10, 100].map(logLevelForVerbosity);
    assert.deepEqual(got, ['info', 'info', 'info', 'info', 'debug', 'debug', 'trace', 'trace', 'trace', 'trace']);
  });

  test('-v=4 lets debug lines through and -v=2 does not', () => {
    for (const [v, shown] of [[2, ['i']], [4, ['d', 'i']], [6, ['t', 'd', 'i']]] as const) {
      const { log, lines } = capture({ level: logLevelForVerbosity(v), format: 'json' });
      log.trace('t');
      log.debug('d');
      log.info('i');
      assert.deepEqual(lines.map((l) => (JSON.parse(l) as { msg: string }).msg), shown, `-v=${v}`);
    }
  });
});
