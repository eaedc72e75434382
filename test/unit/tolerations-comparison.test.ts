/**
 * Upstream's own tables for the `Lt`/`Gt` toleration operators and the TaintTolerationComparisonOperators
 * gate, ported with upstream's case names (issue 53, item 3):
 * - k8s.io/api v0.37.2 `core/v1/toleration_test.go`: `TestTolerationToleratesTaint` (each row with
 *   its `enableTaintTolerationComparisonOperatorsFG`) and `TestCompareNumericValues`;
 * - k8s.io/apimachinery v0.37.2 `pkg/api/validate/content/decimal_int_test.go`: `TestIsDecimalInteger`.
 * Rows marked "(gate off)" are ours: each upstream row that tolerates with the gate on, run with it
 * off, where `ToleratesTaint` returns false for every Lt/Gt toleration.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Taint, Toleration } from '../../src/kube/objects.js';
import { compareNumericValues, isDecimalInteger, toleratesTaint } from '../../src/tainteviction/tolerations.js';

/** TestTolerationToleratesTaint: description, toleration, taint, expectTolerated, enableTaintTolerationComparisonOperatorsFG. */
const TOLERATES_TAINT: [string, Toleration, Taint, boolean, boolean][] = [
  ['toleration and taint have the same key and effect, and operator is Exists, and taint has no value, expect tolerated', { key: 'foo', operator: 'Exists', effect: 'NoSchedule' }, { key: 'foo', effect: 'NoSchedule' }, true, false],
  ['toleration and taint have the same key and effect, and operator is Exists, and taint has some value, expect tolerated', { key: 'foo', operator: 'Exists', effect: 'NoSchedule' }, { key: 'foo', value: 'bar', effect: 'NoSchedule' }, true, false],
  ['toleration and taint have the same effect, toleration has empty key and operator is Exists, means match all taints, expect tolerated', { key: '', operator: 'Exists', effect: 'NoSchedule' }, { key: 'foo', value: 'bar', effect: 'NoSchedule' }, true, false],
  ['toleration and taint have the same key, effect and value, and operator is Equal, expect tolerated', { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' }, { key: 'foo', value: 'bar', effect: 'NoSchedule' }, true, false],
  ['toleration and taint have the same key and effect, but different values, and operator is Equal, expect not tolerated', { key: 'foo', operator: 'Equal', value: 'value1', effect: 'NoSchedule' }, { key: 'foo', value: 'value2', effect: 'NoSchedule' }, false, false],
  ['toleration and taint have the same key and value, but different effects, and operator is Equal, expect not tolerated', { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' }, { key: 'foo', value: 'bar', effect: 'NoExecute' }, false, false],
  ['toleration with Gt operator - taint value less than toleration value, expect not tolerated', { key: 'node.kubernetes.io/sla', operator: 'Gt', value: '950', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/sla', value: '800', effect: 'NoSchedule' }, false, true],
  ['toleration with Gt operator - taint value greater than toleration value, expect tolerated', { key: 'node.kubernetes.io/sla', operator: 'Gt', value: '750', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/sla', value: '950', effect: 'NoSchedule' }, true, true],
  ['toleration with Lt operator - taint value greater than toleration value, expect not tolerated', { key: 'node.kubernetes.io/sla', operator: 'Lt', value: '800', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/sla', value: '950', effect: 'NoSchedule' }, false, true],
  ['toleration with Lt operator - taint value less than toleration value, expect tolerated', { key: 'node.kubernetes.io/sla', operator: 'Lt', value: '950', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/sla', value: '800', effect: 'NoSchedule' }, true, true],
  ['toleration with Gt operator and taint with equal numeric value, expect not tolerated', { key: 'node.kubernetes.io/sla', operator: 'Gt', value: '950', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/sla', value: '950', effect: 'NoSchedule' }, false, true],
  ['toleration with Gt operator and taint with non-numeric value, expect not tolerated', { key: 'node.kubernetes.io/sla', operator: 'Gt', value: '950', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/sla', value: 'high', effect: 'NoSchedule' }, false, true],
  ['toleration with Gt operator and negative numeric values - taint value less than threshold, expect not tolerated', { key: 'test-key', operator: 'Gt', value: '-100', effect: 'NoSchedule' }, { key: 'test-key', value: '-200', effect: 'NoSchedule' }, false, true],
  ['toleration with Gt operator and large int64 values - taint value less than threshold, expect not tolerated', { key: 'test-key', operator: 'Gt', value: '9223372036854775806', effect: 'NoSchedule' }, { key: 'test-key', value: '100', effect: 'NoSchedule' }, false, true],
];

describe('TestTolerationToleratesTaint (k8s.io/api core/v1 toleration_test.go)', () => {
  for (const [description, toleration, taint, expectTolerated, gate] of TOLERATES_TAINT) {
    test(description, () => {
      assert.equal(toleratesTaint(toleration, taint, gate), expectTolerated);
    });
    if (gate && expectTolerated) {
      test(`${description} (gate off)`, () => {
        assert.equal(toleratesTaint(toleration, taint, false), false);
      });
    }
  }
});

/** TestCompareNumericValues: description, tolerationVal, taintVal, operator, expectedResult. */
const COMPARE_NUMERIC_VALUES: [string, string, string, string, boolean][] = [
['Gt operator - taint value greater than toleration value, expect true', '100', '200', 'Gt', true],
  ['Gt operator - taint value less than toleration value, expect false', '200', '100', 'Gt', false],
  ['Gt operator - taint value equal to toleration value, expect false', '100', '100', 'Gt', false],
  ['Gt operator - negative numbers, taint greater, expect true', '-100', '-50', 'Gt', true],
  ['Gt operator - negative numbers, taint less, expect false', '-50', '-100', 'Gt', false],
  ['Gt operator - zero and positive, expect true', '0', '1', 'Gt', true],
  ['Gt operator - large int64 values, taint greater, expect true', '9223372036854775806', '9223372036854775807', 'Gt', true],
  ['Lt operator - taint value less than toleration value, expect true', '200', '100', 'Lt', true],
  ['Lt operator - taint value greater than toleration value, expect false', '100', '200', 'Lt', false],
  ['Lt operator - taint value equal to toleration value, expect false', '100', '100', 'Lt', false],
  ['Lt operator - negative numbers, taint less, expect true', '-50', '-100', 'Lt', true],
  ['Lt operator - negative numbers, taint greater, expect false', '-100', '-50', 'Lt', false],
  ['Lt operator - zero and negative, expect true', '0', '-1', 'Lt', true],
  ['Gt operator - invalid toleration value (non-numeric), expect false', 'abc', '100', 'Gt', false],
  ['Gt operator - invalid toleration value (empty string), expect false', '', '100', 'Gt', false],
  ['Gt operator - invalid toleration value (leading zero), expect false', '0100', '200', 'Gt', false],
  ['Gt operator - invalid toleration value (plus sign), expect false', '+100', '200', 'Gt', false],
  ['Gt operator - invalid toleration value (floating point), expect false', '100.5', '200', 'Gt', false],
  ['Gt operator - invalid toleration value (just minus sign), expect false', '-', '100', 'Gt', false],
  ['Gt operator - invalid taint value (non-numeric), expect false', '100', 'xyz', 'Gt', false],
  ['Gt operator - invalid taint value (empty string), expect false', '100', '', 'Gt', false],
  ['Gt operator - invalid taint value (leading zero), expect false', '100', '0200', 'Gt', false],
  ['Lt operator - invalid taint value (plus sign), expect false', '100', '+200', 'Lt', false],
  ['Lt operator - invalid taint value (spaces), expect false', '100', ' 200 ', 'Lt', false],
  ['Equal operator (unsupported for numeric comparison), expect false', '100', '100', 'Equal', false],
  ['Exists operator (unsupported for numeric comparison), expect false', '100', '100', 'Exists', false],
  ['Gt operator - both zero, expect false', '0', '0', 'Gt', false],
  ['Lt operator - both zero, expect false', '0', '0', 'Lt', false],
  ['Gt operator - max int64 as taint, expect true', '0', '9223372036854775807', 'Gt', true],
  ['Lt operator - min int64 as taint, expect true', '0', '-9223372036854775808', 'Lt', true],
];

describe('TestCompareNumericValues (k8s.io/api core/v1 toleration_test.go)', () => {
  for (const [description, tolerationVal, taintVal, operator, expectedResult] of COMPARE_NUMERIC_VALUES) {
    test(description, () => {
      assert.equal(compareNumericValues(tolerationVal, taintVal, operator), expectedResult);
      // Through ToleratesTaint with the gate on (upstream's only caller), for the two operators it routes there.
      if (operator === 'Lt' || operator === 'Gt') {
        assert.equal(toleratesTaint({ key: 'k', operator, value: tolerationVal }, { key: 'k', value: taintVal, effect: 'NoExecute' }, true), expectedResult);
      }
    });
  }
  test('(ours) a canonical integer outside int64 fails strconv.ParseInt: no match', () => {
    assert.equal(compareNumericValues('0', '9223372036854775808', 'Gt'), false);
    assert.equal(compareNumericValues('-9223372036854775809', '0', 'Gt'), false);
  });
});

/** TestIsDecimalInteger: name, input, shouldPass. */
const IS_DECIMAL_INTEGER: [string, string, boolean][] = [
['zero', "0", true],
  ['positive single digit 1', "1", true],
  ['positive single digit 2', "2", true],
  ['positive single digit 5', "5", true],
  ['positive single digit 9', "9", true],
  ['negative single digit', "-5", true],
  ['negative single digit 1', "-1", true],
  ['negative single digit 9', "-9", true],
  ['number starting with 1', "100", true],
  ['number starting with 2', "234", true],
  ['number starting with 3', "345", true],
  ['number starting with 4', "456", true],
  ['number starting with 5', "567", true],
  ['number starting with 6', "678", true],
  ['number starting with 7', "789", true],
  ['number starting with 8', "890", true],
  ['number starting with 9', "999", true],
  ['positive multi-digit', "123", true],
  ['negative multi-digit', "-456", true],
  ['negative starting with 1', "-100", true],
  ['negative starting with 9', "-987", true],
  ['large positive number', "9223372036854775807", true],
  ['large negative number', "-9223372036854775808", true],
  ['very long valid number', "12345678901234567890", true],
  ['all nines', "999999999999", true],
  ['negative zero', "-0", false],
  ['double zero', "00", false],
  ['triple zero', "000", false],
  ['many zeros', "0000000", false],
  ['leading zero single digit', "01", false],
  ['leading zero digit 2', "02", false],
  ['leading zero digit 9', "09", false],
  ['leading zero multi-digit', "0123", false],
  ['octal-like format', "0700", false],
  ['octal-like format 2', "0950", false],
  ['multiple leading zeros', "00123", false],
  ['negative with leading zero', "-01", false],
  ['negative with leading zeros', "-0123", false],
  ['negative double zero', "-00", false],
  ['plus sign', "+123", false],
  ['positive plus sign', "+5", false],
  ['plus zero', "+0", false],
  ['empty string', "", false],
  ['just minus sign', "-", false],
  ['just plus sign', "+", false],
  ['single space', " ", false],
  ['multiple spaces', "   ", false],
  ['leading space', " 123", false],
  ['trailing space', "123 ", false],
  ['space in middle', "12 3", false],
  ['spaces around', " 123 ", false],
  ['decimal number', "12.3", false],
  ['decimal zero', "0.0", false],
  ['negative decimal', "-12.5", false],
  ['trailing dot', "123.", false],
  ['leading dot', ".123", false],
  ['alphabetic', "abc", false],
  ['alphanumeric', "12a3", false],
  ['letter at start', "a123", false],
  ['letter at end', "123a", false],
  ['uppercase letters', "ABC", false],
  ['mixed case', "12A3", false],
  ['hexadecimal', "0x123", false],
  ['hex uppercase', "0X123", false],
  ['octal prefix', "0o777", false],
  ['binary prefix', "0b101", false],
  ['scientific notation', "1e5", false],
  ['scientific negative exp', "1e-5", false],
  ['scientific uppercase', "1E5", false],
  ['underscore separator', "1_000", false],
  ['comma separator', "1,000", false],
  ['period separator', "1.000", false],
  ['apostrophe separator', "1'000", false],
  ['double minus', "--123", false],
  ['double plus', "++123", false],
  ['plus minus', "+-123", false],
  ['minus plus', "-+123", false],
  ['minus at end', "123-", false],
  ['minus in middle', "12-3", false],
  ['plus at end', "123+", false],
  ['plus in middle', "12+3", false],
  ['tab character at start', "\t123", false],
  ['tab character at end', "123\t", false],
  ['newline character', "123\n", false],
  ['carriage return', "123\r", false],
  ['null character', "123\x00", false],
  ['vertical tab', "123\v", false],
  ['form feed', "123\f", false],
  ['parentheses', "(123)", false],
  ['brackets', "[123]", false],
  ['braces', "{123}", false],
  ['dollar sign', "$123", false],
  ['percent sign', "123%", false],
  ['hash', "#123", false],
  ['at sign', "@123", false],
  ['ampersand', "&123", false],
  ['asterisk', "*123", false],
  ['slash', "12/3", false],
  ['backslash', "12\\3", false],
  ['pipe', "12|3", false],
  ['semicolon', "12;3", false],
  ['colon', "12:3", false],
  ['question mark', "12?3", false],
  ['exclamation', "12!3", false],
  ['tilde', "~123", false],
  ['backtick', "`123", false],
  ['single quote', "'123'", false],
  ['double quote', "\"123\"", false],
  ['unicode minus', "−123", false],
  ['unicode digit', "１２３", false],
  ['arabic digits', "١٢٣", false],
  ['chinese characters', "一二三", false],
  ['superscript', "123⁴", false],
  ['subscript', "123₄", false],
];

describe('TestIsDecimalInteger (k8s.io/apimachinery validate/content decimal_int_test.go)', () => {
  for (const [name, input, shouldPass] of IS_DECIMAL_INTEGER) {
    test(name, () => {
      assert.equal(isDecimalInteger(input), shouldPass);
    });
  }
  test('rejects what strconv.ParseInt accepts (upstream\'s strconvAcceptsButWeReject)', () => {
    for (const c of ['+123', '0700', '01']) assert.equal(isDecimalInteger(c), false, c);
  });
});
