import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DurationSyntaxError, formatGoDuration, parseGoDuration } from '../../src/util/duration.js';

describe('parseGoDuration (Go time.ParseDuration syntax, milliseconds out)', () => {
  const cases: [string, number][] = [
    ['0', 0],
    ['50s', 50_000],
    ['1m30s', 90_000],
    ['1m', 60_000],
    ['5m0s', 300_000],
    ['500ms', 500],
    ['1.5h', 5_400_000],
    ['-2s', -2000],
    ['+3s', 3000],
    ['1h2m3.5s', 3_723_500],
    ['1500us', 1.5],
    ['1000000ns', 1],
    ['.5s', 500],
  ];
  for (const [text, ms] of cases) {
    test(`${text} = ${ms} ms`, () => assert.equal(parseGoDuration(text), ms));
  }
  for (const bad of ['', '5', 'abc', '5x', '1m30', 's', '-', '1.2.3s', '5 s']) {
    test(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => parseGoDuration(bad), DurationSyntaxError));
  }
});

describe('formatGoDuration', () => {
  test('formats like Go Duration.String()', () => {
    assert.equal(formatGoDuration(0), '0s');
    assert.equal(formatGoDuration(50_000), '50s');
    assert.equal(formatGoDuration(90_000), '1m30s');
    assert.equal(formatGoDuration(300_000), '5m0s');
    assert.equal(formatGoDuration(3_600_000), '1h0m0s');
    assert.equal(formatGoDuration(500), '500ms');
    assert.equal(formatGoDuration(-2000), '-2s');
  });
  test('round-trips whole milliseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), (ms) => {
        assert.equal(parseGoDuration(formatGoDuration(ms)), ms);
      }),
    );
  });
});
