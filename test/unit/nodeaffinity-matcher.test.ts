/**
 * Ports of `k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go` (v0.37.2)
 * with upstream's case names: TestNodeSelectorMatch, TestNodeSelectorRequirementsAsSelector,
 * TestPodMatchesNodeSelectorAndAffinityTerms. (TestPreferredSchedulingTermsScore is not ported:
 * preferred terms are never enforced.) Plus the annotation parser (src/nodeaffinity/rule.ts).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toPod } from '../../src/kube/objects.js';
import {
  LazyErrorNodeSelector,
  NodeSelectorParseError,
  newNodeSelector,
  parseInt64,
  requiredNodeAffinity,
  type MatchableNode,
  type NodeSelector,
  type NodeSelectorRequirement,
} from '../../src/nodeaffinity/matcher.js';
import {
  ENFORCE_REQUIRED_DURING_SCHEDULING_ANNOTATION as OPT_IN,
  REQUIRED_DURING_EXECUTION_ANNOTATION as RULE,
  parseNodeSelectorAnnotation,
  podRule,
  toAffinityPod,
} from '../../src/nodeaffinity/rule.js';

const expr = (key: string, operator: string, values?: string[]): NodeSelectorRequirement => (values ? { key, operator, values } : { key, operator });
const node = (name: string, labels: Record<string, string> = {}): MatchableNode => ({ name, labels });

describe('TestNodeSelectorMatch', () => {
  const cases: { name: string; nodeSelector: NodeSelector; node?: MatchableNode; wantErr?: string[]; wantMatch: boolean }[] = [
    { name: 'nil node', nodeSelector: {}, wantMatch: false },
    {
      name: 'invalid field selector and label selector',
      nodeSelector: {
        nodeSelectorTerms: [
          { matchFields: [expr('metadata.name', 'In', ['host_1', 'host_2'])] },
          { matchExpressions: [expr('label_1', 'In', ['label_1_val'])], matchFields: [expr('metadata.name', 'In', ['host_1'])] },
          { matchExpressions: [expr('invalid key', 'In', ['label_value'])] },
        ],
      },
      wantErr: ['nodeSelectorTerms[0].matchFields[0].values', 'nodeSelectorTerms[2].matchExpressions[0].key'],
      wantMatch: false,
    },
    {
      name: 'node matches field selector, but not labels',
      nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [expr('label_1', 'In', ['label_1_val'])], matchFields: [expr('metadata.name', 'In', ['host_1'])] }] },
      node: node('host_1'),
      wantMatch: false,
    },
    {
      name: 'node matches field selector and label selector',
      nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [expr('label_1', 'In', ['label_1_val'])], matchFields: [expr('metadata.name', 'In', ['host_1'])] }] },
      node: node('host_1', { label_1: 'label_1_val' }),
      wantMatch: true,
    },
    {
      name: 'second term matches',
      nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [expr('label_1', 'In', ['label_1_val'])] }, { matchFields: [expr('metadata.name', 'In', ['host_1'])] }] },
      node: node('host_1'),
      wantMatch: true,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      let sel: LazyErrorNodeSelector;
      try {
        sel = newNodeSelector(c.nodeSelector);
      } catch (err) {
        assert.ok(err instanceof NodeSelectorParseError, String(err));
        assert.deepEqual(
          err.errors.map((e) => e.field),
          c.wantErr,
        );
        return;
      }
      assert.equal(c.wantErr, undefined, 'expected a parse error');
      assert.equal(sel.match(c.node).match, c.wantMatch);
    });
  }
  test('the error detail of an invalid key is upstream\'s', () => {
    assert.throws(
      () => newNodeSelector({ nodeSelectorTerms: [{ matchExpressions: [expr('invalid key', 'In', ['v'])] }] }),
      /name part must consist of alphanumeric characters, '-', '_' or '\.', and must start and end with an alphanumeric character/,
    );
  });
});

describe('TestNodeSelectorRequirementsAsSelector', () => {
  // Each case is one term's matchExpressions; "out" is checked by matching, since we keep no
  // labels.Selector to compare with reflect.DeepEqual.
  const match = (exprs: NodeSelectorRequirement[], labels: Record<string, string>): boolean =>
    newNodeSelector({ nodeSelectorTerms: [{ matchExpressions: exprs }] }).match(node('n', labels)).match;
  test('in: nil, out: labels.Nothing()', () => {
    assert.equal(new LazyErrorNodeSelector({ nodeSelectorTerms: [{}] }).match(node('n', {})).match, false);
  });
  test('in: [], out: labels.Nothing()', () => {
    assert.equal(new LazyErrorNodeSelector({ nodeSelectorTerms: [{ matchExpressions: [] }] }).match(node('n', { foo: 'bar' })).match, false);
  });
  test('foo in (baz,bar)', () => {
    assert.equal(match([expr('foo', 'In', ['bar', 'baz'])], { foo: 'baz' }), true);
    assert.equal(match([expr('foo', 'In', ['bar', 'baz'])], { foo: 'qux' }), false);
    assert.equal(match([expr('foo', 'In', ['bar', 'baz'])], {}), false);
  });
  test('Exists with values: "values set must be empty for exists and does not exist"', () => {
    assert.throws(() => match([expr('foo', 'Exists', ['bar', 'baz'])], {}), /root|matchExpressions\[0\]\.values: values set must be empty for exists and does not exist/);
  });
  test('foo>1', () => {
    assert.equal(match([expr('foo', 'Gt', ['1'])], { foo: '2' }), true);
    assert.equal(match([expr('foo', 'Gt', ['1'])], { foo: '1' }), false);
    assert.equal(match([expr('foo', 'Gt', ['1'])], { foo: 'x' }), false, 'a label that is not an integer never matches');
    assert.equal(match([expr('foo', 'Gt', ['1'])], {}), false);
  });
  test('bar<7', () => {
    assert.equal(match([expr('bar', 'Lt', ['7'])], { bar: '6' }), true);
    assert.equal(match([expr('bar', 'Lt', ['7'])], { bar: '-8' }), true);
    assert.equal(match([expr('bar', 'Lt', ['7'])], { bar: '7' }), false);
  });
  test('operator "invalid": NotSupported', () => {
    assert.throws(() => match([expr('baz', 'invalid', ['5'])], {}), /operator: Unsupported value: "invalid"/);
  });
  test('Gt/Lt need exactly one int64 value (strconv.ParseInt)', () => {
    assert.throws(() => match([expr('a', 'Gt', ['1', '2'])], {}), /exactly one value/);
    assert.throws(() => match([expr('a', 'Lt', ['1.5'])], {}), /must be an integer/);
    assert.throws(() => match([expr('a', 'Lt', ['9223372036854775808'])], {}), /must be an integer/);
    assert.equal(parseInt64('+0204'), 204n);
    assert.equal(parseInt64('-9223372036854775808'), -(2n ** 63n));
    // Beyond 2^53 the comparison stays exact (BigInt, not Number).
    assert.equal(match([expr('a', 'Gt', ['9007199254740992'])], { a: '9007199254740993' }), true);
  });
});

describe('TestPodMatchesNodeSelectorAndAffinityTerms', () => {
  type Case = { name: string; nodeSelector?: Record<string, string>; required?: NodeSelector; labels?: Record<string, string>; nodeName?: string; want: boolean };
  const terms = (...t: NodeSelector['nodeSelectorTerms'] & unknown[]): NodeSelector => ({ nodeSelectorTerms: t });
  const name = 'metadata.name';
  const cases: Case[] = [
    { name: 'no selector', want: true },
    { name: 'missing labels', nodeSelector: { foo: 'bar' }, want: false },
    { name: 'same labels', nodeSelector: { foo: 'bar' }, labels: { foo: 'bar' }, want: true },
    { name: 'node labels are superset', nodeSelector: { foo: 'bar' }, labels: { foo: 'bar', baz: 'blah' }, want: true },
    { name: 'node labels are subset', nodeSelector: { foo: 'bar', baz: 'blah' }, labels: { foo: 'bar' }, want: false },
    {
      name: 'Pod with matchExpressions using In operator that matches the existing node',
      required: terms({ matchExpressions: [expr('foo', 'In', ['bar', 'value2'])] }),
      labels: { foo: 'bar' },
      want: true,
    },
    {
      name: 'Pod with matchExpressions using Gt operator that matches the existing node',
      required: terms({ matchExpressions: [expr('kernel-version', 'Gt', ['0204'])] }),
      // We use two digit to denote major version and two digit for minor version.
      labels: { 'kernel-version': '0206' },
      want: true,
    },
    {
      name: 'Pod with matchExpressions using NotIn operator that matches the existing node',
      required: terms({ matchExpressions: [expr('mem-type', 'NotIn', ['DDR', 'DDR2'])] }),
      labels: { 'mem-type': 'DDR3' },
      want: true,
    },
    {
      name: 'Pod with matchExpressions using Exists operator that matches the existing node',
      required: terms({ matchExpressions: [expr('GPU', 'Exists')] }),
      labels: { GPU: 'NVIDIA-GRID-K1' },
      want: true,
    },
    {
      name: "Pod with affinity that don't match node's labels won't schedule onto the node",
      required: terms({ matchExpressions: [expr('foo', 'In', ['value1', 'value2'])] }),
      labels: { foo: 'bar' },
      want: false,
    },
    {
      name: "Pod with a nil []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the node",
      required: { nodeSelectorTerms: null },
      labels: { foo: 'bar' },
      want: false,
    },
    {
      name: "Pod with an empty []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the node",
      required: { nodeSelectorTerms: [] },
      labels: { foo: 'bar' },
      want: false,
    },
    {
      name: "Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
      required: terms({ matchExpressions: [] }),
      labels: { foo: 'bar' },
      want: false,
    },
    { name: 'Pod with no Affinity will schedule onto a node', labels: { foo: 'bar' }, want: true },
    { name: 'Pod with Affinity but nil NodeSelector will schedule onto a node', labels: { foo: 'bar' }, want: true },
    {
      name: 'Pod with multiple matchExpressions ANDed that matches the existing node',
      required: terms({ matchExpressions: [expr('GPU', 'Exists'), expr('GPU', 'NotIn', ['AMD', 'INTER'])] }),
      labels: { GPU: 'NVIDIA-GRID-K1' },
      want: true,
    },
    {
      name: "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
      required: terms({ matchExpressions: [expr('GPU', 'Exists'), expr('GPU', 'In', ['AMD', 'INTER'])] }),
      labels: { GPU: 'NVIDIA-GRID-K1' },
      want: false,
    },
    {
      name: "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
      required: terms({ matchExpressions: [expr('foo', 'In', ['bar', 'value2'])] }, { matchExpressions: [expr('diffkey', 'In', ['wrong', 'value2'])] }),
      labels: { foo: 'bar' },
      want: true,
    },
    {
      name: 'Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node',
      nodeSelector: { foo: 'bar' },
      required: terms({ matchExpressions: [expr('foo', 'Exists')] }),
      labels: { foo: 'bar' },
      want: true,
    },
    {
      name: "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is not satisfied, won't schedule onto the node",
      nodeSelector: { foo: 'bar' },
      required: terms({ matchExpressions: [expr('foo', 'Exists')] }),
      labels: { foo: 'barrrrrr' },
      want: false,
    },
    {
      name: "Pod with an invalid value in Affinity term won't be scheduled onto the node",
      required: terms({ matchExpressions: [expr('foo', 'NotIn', ['invalid value: ___@#$%^'])] }),
      labels: { foo: 'bar' },
      want: false,
    },
    {
      name: 'Pod with matchFields using In operator that matches the existing node',
      required: terms({ matchFields: [expr(name, 'In', ['node_1'])] }),
      nodeName: 'node_1',
      want: true,
    },
    {
      name: 'Pod with matchFields using In operator that does not match the existing node',
      required: terms({ matchFields: [expr(name, 'In', ['node_1'])] }),
      nodeName: 'node_2',
      want: false,
    },
    {
      name: 'Pod with two terms: matchFields does not match, but matchExpressions matches',
      required: terms({ matchFields: [expr(name, 'In', ['node_1'])] }, { matchExpressions: [expr('foo', 'In', ['bar'])] }),
      nodeName: 'node_2',
      labels: { foo: 'bar' },
      want: true,
    },
    {
      name: 'Pod with one term: matchFields does not match, but matchExpressions matches',
      required: terms({ matchFields: [expr(name, 'In', ['node_1'])], matchExpressions: [expr('foo', 'In', ['bar'])] }),
      nodeName: 'node_2',
      labels: { foo: 'bar' },
      want: false,
    },
    {
      name: 'Pod with one term: both matchFields and matchExpressions match',
      required: terms({ matchFields: [expr(name, 'In', ['node_1'])], matchExpressions: [expr('foo', 'In', ['bar'])] }),
      nodeName: 'node_1',
      labels: { foo: 'bar' },
      want: true,
    },
    {
      name: 'Pod with two terms: both matchFields and matchExpressions do not match',
      required: terms({ matchFields: [expr(name, 'In', ['node_1'])] }, { matchExpressions: [expr('foo', 'In', ['not-match-to-bar'])] }),
      nodeName: 'node_2',
      labels: { foo: 'bar' },
      want: false,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = requiredNodeAffinity(c.nodeSelector, c.required)(node(c.nodeName ?? '', c.labels ?? {})).match;
      assert.equal(got, c.want);
    });
  }
});

describe('empty and null terms (API semantics, not the 2015 design text)', () => {
  test('a null term is the zero term: skipped, matches nothing', () => {
    assert.equal(new LazyErrorNodeSelector({ nodeSelectorTerms: [null] }).match(node('n', { a: 'b' })).match, false);
  });
  test('an empty term beside a matching term does not stop the match', () => {
    const sel = new LazyErrorNodeSelector({ nodeSelectorTerms: [{}, { matchExpressions: [expr('a', 'Exists')] }] });
    assert.equal(sel.match(node('n', { a: '' })).match, true);
    assert.equal(sel.termCount, 1);
  });
  test('the lazy selector ignores a bad term when another matches', () => {
    const sel = new LazyErrorNodeSelector({ nodeSelectorTerms: [{ matchExpressions: [expr('bad key', 'In', ['x'])] }, { matchExpressions: [expr('a', 'DoesNotExist')] }] });
    assert.deepEqual(sel.match(node('n', {})), { match: true, errors: [] });
    const miss = sel.match(node('n', { a: 'x' }));
    assert.equal(miss.match, false);
    assert.equal(miss.errors.length, 1);
  });
});

describe('annotation parsing (rule.ts)', () => {
  test('a valid annotation with every operator and matchFields', () => {
    const sel = parseNodeSelectorAnnotation(
      JSON.stringify({
        nodeSelectorTerms: [
          {
            matchExpressions: [expr('zone', 'In', ['a', 'b']), expr('pool', 'NotIn', ['spot']), expr('gpu', 'Exists'), expr('drain', 'DoesNotExist'), expr('gen', 'Gt', ['2']), expr('gen', 'Lt', ['9'])],
          },
          { matchFields: [expr('metadata.name', 'In', ['pinned'])] },
        ],
      }),
    );
    assert.equal(sel.match(node('x', { zone: 'a', gpu: '1', gen: '5' })).match, true);
    assert.equal(sel.match(node('x', { zone: 'a', gpu: '1', gen: '5', drain: '' })).match, false);
    assert.equal(sel.match(node('pinned', {})).match, true);
  });
  for (const [what, text, re] of [
    ['not JSON', '{nodeSelectorTerms', /not valid JSON/],
    ['not an object', '[]', /JSON object/],
    ['no terms', '{"nodeSelectorTerms":[]}', /at least one node selector term/],
    ['a bad operator', JSON.stringify({ nodeSelectorTerms: [{ matchExpressions: [expr('a', 'Maybe', ['x'])] }] }), /Unsupported value: "Maybe"/],
    ['a field other than metadata.name', JSON.stringify({ nodeSelectorTerms: [{ matchFields: [expr('spec.unschedulable', 'In', ['true'])] }] }), /metadata\.name/],
    ['values not strings', '{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Gt","values":[3]}]}]}', /list of strings/],
    ['one bad term among good ones (strict, unlike the lazy scheduler form)', JSON.stringify({ nodeSelectorTerms: [{ matchExpressions: [expr('a', 'Exists')] }, { matchExpressions: [expr('b', 'Gt', ['x'])] }] }), /must be an integer/],
  ] as const) {
    test(`malformed: ${what}`, () => assert.throws(() => parseNodeSelectorAnnotation(text), re));
  }
  test('podRule: none without annotations; malformed reasons name the annotation', () => {
    assert.deepEqual(podRule(undefined, undefined), { kind: 'none' });
    assert.deepEqual(podRule({ [OPT_IN]: 'false' }, { nodeSelectorTerms: [] }), { kind: 'none' });
    const bad = podRule({ [RULE]: 'nope' }, undefined);
    assert.equal(bad.kind, 'malformed');
    assert.match(bad.kind === 'malformed' ? bad.reason : '', /required-during-execution: not valid JSON/);
    assert.equal(podRule({ [OPT_IN]: 'yes' }, undefined).kind, 'malformed');
    assert.equal(podRule({ [OPT_IN]: 'true' }, undefined).kind, 'malformed', 'opt-in without a required affinity');
  });
  test('podRule: a rule whose terms are all empty is not enforced (it would evict from every node)', () => {
    const r = podRule({ [RULE]: '{"nodeSelectorTerms":[{}]}' }, undefined);
    assert.equal(r.kind, 'malformed');
    const o = podRule({ [OPT_IN]: 'true' }, { nodeSelectorTerms: [{ matchExpressions: [] }] });
    assert.equal(o.kind, 'malformed');
  });
  test('podRule: both annotations give two selectors (ANDed by the decision)', () => {
    const r = podRule({ [RULE]: JSON.stringify({ nodeSelectorTerms: [{ matchExpressions: [expr('a', 'Exists')] }] }), [OPT_IN]: 'true' }, { nodeSelectorTerms: [{ matchExpressions: [expr('b', 'Exists')] }] });
    assert.equal(r.kind, 'rule');
    assert.deepEqual(r.kind === 'rule' ? r.selectors.map((s) => s.source) : [], ['annotation', 'required-during-scheduling']);
  });
  test('toAffinityPod: DaemonSet controller, mirror annotation, identity required', () => {
    const base = { metadata: { namespace: 'ns', name: 'p', uid: 'u', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { nodeName: 'n1' } };
    const p = toAffinityPod({ ...base, metadata: { ...base.metadata, ownerReferences: [{ kind: 'DaemonSet', name: 'd', uid: 'x', apiVersion: 'apps/v1', controller: true }], annotations: { 'kubernetes.io/config.mirror': 'h' } } });
    assert.equal(p?.daemonSet, true);
    assert.equal(p?.mirror, true);
    assert.equal(p?.nodeName, 'n1');
    assert.equal(p?.rule.kind, 'none');
    assert.equal(toAffinityPod({ metadata: { name: 'p' } }), undefined);
  });
  test('toAffinityPod rejects what toPod rejects (no readable creationTimestamp): such a pod is absent from every cache', () => {
    const base = { metadata: { namespace: 'ns', name: 'p', uid: 'u', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { nodeName: 'n1' } };
    assert.notEqual(toAffinityPod(base), undefined);
    assert.notEqual(toPod(base), undefined);
    for (const creationTimestamp of [undefined, 'not a time', '']) {
      const bad = { ...base, metadata: { ...base.metadata, creationTimestamp } };
      assert.equal(toPod(bad), undefined);
      assert.equal(toAffinityPod(bad), undefined, `creationTimestamp ${String(creationTimestamp)}`);
    }
  });
});
