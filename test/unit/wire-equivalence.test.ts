/**
 * Issue 53, "the wire format never changes a decision", as a property: arbitrary Node, Pod and
 * Lease messages, generated from the schema (src/kube/protobuf/gen) with fast-check and encoded with
 * @bufbuild/protobuf, with and without byte-level mutations of their string and length fields and
 * with a second message appended (proto merge), give the same slim object, or the same
 * unreadable verdict, through the skipping decoder (src/kube/protobuf/decoder.ts) as through a full
 * reflective decode by upstream's gogo rules followed by the API server's JSON and the JSON path's
 * converters (test/support/gogo-reference.ts).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { create, fromBinary, ScalarType, toBinary, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { NodeSchema, PodSchema } from '../../src/kube/protobuf/gen/k8s.io/api/core/v1/generated_pb.js';
import { LeaseSchema } from '../../src/kube/protobuf/gen/k8s.io/api/coordination/v1/generated_pb.js';
import { leaseView, nodeView, podView, undecodableMeta } from '../../src/kube/protobuf/decoder.js';
import { goJsonString } from '../../src/kube/protobuf/reader.js';
import { quantityParses } from '../../src/kube/protobuf/validate.js';
import { toLease, toNode, toPodWithLabels } from '../../src/kube/objects.js';
import { goDecode, GoDecodeError, goJsonText, messageJson } from '../support/gogo-reference.js';

const TIME = 'k8s.io.apimachinery.pkg.apis.meta.v1.Time';
const MICRO_TIME = 'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime';
const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';

// ---- generators from the schema ------------------------------------------------------------------

const k8sName = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,10}[a-z0-9])?$/);
const anyString = fc.oneof(
  { weight: 3, arbitrary: k8sName },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('', 'Ready', 'True', 'False', 'Unknown', 'NoExecute', 'Exists', '\uFEFFbom', '__proto__') },
);
const int64 = fc.oneof(fc.bigInt({ min: -5n, max: 5n }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 40n }));
const seconds = fc.oneof(
  fc.constantFrom(0n, 1_790_000_000n, -62_135_596_800n, -62_167_219_200n, -62_167_219_201n, 253_402_300_799n, 253_402_300_800n, -1n),
  fc.bigInt({ min: -70_000_000_000n, max: 260_000_000_000n }),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
);
const nanos = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 999_999_999 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
const timeArb = fc.record({ seconds, nanos }, { requiredKeys: [] });
const quantityArb = fc.oneof(fc.constantFrom('0', '1', '100m', '1Gi', '1.5Ki', 'Pi', 'Ti', 'e-10', 'e-9', '.', '+', '1e3', '1E', 'Ki5', '1.5.5', '-0.0001n', '1e99999999999999999999'), fc.stringMatching(/^[+-]?[0-9.]{0,3}[eEinumkKMGTP]{0,2}[+-]?[0-9]{0,2}$/), fc.string({ maxLength: 4 }));

function scalarArb(t: ScalarType): fc.Arbitrary<unknown> {
  switch (t) {
    case ScalarType.STRING:
      return anyString;
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 6 });
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return int64;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return fc.nat();
    default:
      return fc.oneof(fc.integer({ min: -3, max: 50 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
  }
}

const messageArbs = new Map<string, fc.Arbitrary<Record<string, unknown>>>();

/** Init objects for `create(desc, …)`: any subset of the fields, nested messages to `depth`. */
function messageArb(desc: DescMessage, depth: number): fc.Arbitrary<Record<string, unknown>> {
  if (desc.typeName === TIME || desc.typeName === MICRO_TIME) return timeArb as fc.Arbitrary<Record<string, unknown>>;
  if (desc.typeName === QUANTITY) return fc.record({ string: quantityArb }, { requiredKeys: [] });
  const key = `${desc.typeName}@${depth}`;
  let arb = messageArbs.get(key);
  if (arb) return arb;
  if (depth < 0) return fc.constant({});
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of desc.fields) shape[f.localName] = fieldArb(f, depth);
  arb = fc.record(shape, { requiredKeys: [] }).map((r) => (Object.keys(r).length > 6 && depth > 0 ? Object.fromEntries(Object.entries(r).slice(0, 6)) : r));
  messageArbs.set(key, arb);
  return arb;
}

function fieldArb(f: DescField, depth: number): fc.Arbitrary<unknown> {
  switch (f.fieldKind) {
    case 'scalar':
      return scalarArb(f.scalar);
    case 'enum':
      return fc.constant(0);
    case 'message':
      return messageArb(f.message, depth - 1);
    case 'list':
      if (f.listKind === 'message') return fc.array(messageArb(f.message, depth - 1), { maxLength: 2 });
      return fc.array(f.listKind === 'scalar' ? scalarArb(f.scalar) : fc.constant(0), { maxLength: 2 });
    case 'map':
      return fc.dictionary(anyString, f.mapKind === 'message' ? messageArb(f.message, depth - 1) : f.mapKind === 'scalar' ? scalarArb(f.scalar) : fc.constant(0), { maxKeys: 2 });
  }
}

/** A message whose converter has what it needs most of the time (so that slim objects, not only verdicts, are compared). */
function kindArb(kind: Kind): fc.Arbitrary<Record<string, unknown>> {
  // Every metadata field the decoder reads (issue 57: the decoder's mutation run found generation,
  // finalizers, owner references and annotations never generated).
  const owner = fc.record({ apiVersion: anyString, kind: anyString, name: k8sName, uid: k8sName, controller: fc.boolean() }, { requiredKeys: [] });
  const meta = fc.record(
    {
      name: k8sName, namespace: k8sName, uid: k8sName, resourceVersion: fc.constantFrom('1', '42'), creationTimestamp: timeArb, deletionTimestamp: timeArb,
      labels: fc.dictionary(anyString, anyString, { maxKeys: 3 }), annotations: fc.dictionary(anyString, anyString, { maxKeys: 2 }),
      generation: int64, finalizers: fc.array(anyString, { maxLength: 2 }), ownerReferences: fc.array(owner, { maxLength: 2 }),
    },
    { requiredKeys: [] },
  );
  const conditionTypes = fc.constantFrom('Ready', 'DisruptionTarget', 'PodScheduled', 'KernelDeadlock', 'MemoryPressure');
  if (kind === 'Pod') {
    const state = fc.oneof(
      fc.constant({}),
      fc.record({ waiting: fc.record({ reason: anyString }, { requiredKeys: [] }) }),
      fc.record({ running: fc.record({ startedAt: timeArb }, { requiredKeys: [] }) }),
      fc.record({ terminated: fc.record({ exitCode: fc.integer({ min: -2, max: 255 }), reason: anyString }, { requiredKeys: [] }) }),
      fc.record({ waiting: fc.constant({}), terminated: fc.constant({}) }),
    );
    const containerStatus = fc.record({ name: k8sName, state, ready: fc.boolean() }, { requiredKeys: [] });
    const cond = fc.record({ type: conditionTypes, status: anyString, reason: anyString, message: anyString, lastTransitionTime: timeArb, lastProbeTime: timeArb }, { requiredKeys: ['type'] });
    const core = fc.record({
      metadata: meta,
      spec: messageArb(PodSchema.field['spec']!.message!, 2),
      status: fc.record(
        {
          phase: anyString, reason: anyString, conditions: fc.array(cond, { maxLength: 3 }),
          initContainerStatuses: fc.array(containerStatus, { maxLength: 2 }), containerStatuses: fc.array(containerStatus, { maxLength: 2 }), ephemeralContainerStatuses: fc.array(containerStatus, { maxLength: 1 }),
        },
        { requiredKeys: [] },
      ),
    });
    return fc.tuple(core, messageArb(PodSchema.field['status']!.message!, 2)).map(([c, s]) => ({ ...c, status: { ...s, ...c.status } }));
  }
  if (kind === 'Node') {
    const cond = fc.record({ type: conditionTypes, status: anyString, reason: anyString, message: anyString, lastHeartbeatTime: timeArb, lastTransitionTime: timeArb }, { requiredKeys: ['type'] });
    return fc
      .tuple(meta, messageArb(NodeSchema.field['spec']!.message!, 2), messageArb(NodeSchema.field['status']!.message!, 2), fc.array(cond, { maxLength: 3 }))
      .map(([metadata, spec, status, conditions]) => ({ metadata, spec, status: { ...status, conditions } }));
  }
  return fc.tuple(meta, messageArb(LeaseSchema.field['spec']!.message!, 2)).map(([metadata, spec]) => ({ metadata, spec }));
}

// ---- mutations -----------------------------------------------------------------------------------

/** A length-delimited field of an encoded message: where its length varint is, and its payload. */
interface Delimited {
  lenAt: number;
  lenSize: number;
  at: number;
  end: number;
  string: boolean;
}

/**
 * Every length-delimited field of well-formed `bytes` of `desc`, nested ones included (read with the
 * schema); `tags`, when given, gets where every field's tag starts, of any wire type.
 */
function delimitedFields(desc: DescMessage, bytes: Uint8Array, start = 0, end = bytes.length, out: Delimited[] = [], tags?: number[]): Delimited[] {
  let i = start;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const c = bytes[i++]!;
      v += (c & 0x7f) * mul;
      if (c < 0x80) return v;
      mul *= 128;
    }
  };
  while (i < end) {
    tags?.push(i);
    const tag = varint();
    const no = Math.floor(tag / 8);
    const wt = tag % 8;
    if (wt === 0) varint();
    else if (wt === 1) i += 8;
    else if (wt === 5) i += 4;
    else if (wt === 2) {
      const lenAt = i;
      const len = varint();
      const d: Delimited = { lenAt, lenSize: i - lenAt, at: i, end: i + len, string: false };
      const f = desc.fields.find((x) => x.number === no);
      if (f?.fieldKind === 'scalar' || (f?.fieldKind === 'list' && f.listKind === 'scalar')) d.string = f.scalar === ScalarType.STRING;
      out.push(d);
      const sub = f?.fieldKind === 'message' || (f?.fieldKind === 'list' && f.listKind === 'message') ? f.message : undefined;
      if (sub) delimitedFields(sub, bytes, d.at, d.end, out, tags);
      i = d.end;
    } else break;
  }
  return out;
}

/** Where each field's tag starts in well-formed `bytes` of `desc`, nested messages included (read with the schema). */
function tagOffsets(desc: DescMessage, bytes: Uint8Array): number[] {
  const tags: number[] = [];
  delimitedFields(desc, bytes, 0, bytes.length, [], tags);
  return tags;
}

type Mutation =
  | { kind: 'none' }
  | { kind: 'bytes'; pick: number; offset: number; bytes: number[] }
  | { kind: 'length'; pick: number; value: number }
  | { kind: 'wiretype'; pick: number; wt: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('bytes' as const), pick: fc.nat(), offset: fc.nat(), bytes: fc.array(fc.oneof(fc.integer({ min: 0x80, max: 0xff }), fc.integer({ min: 0, max: 0xff })), { minLength: 1, maxLength: 3 }) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('length' as const), pick: fc.nat(), value: fc.nat({ max: 127 }) }) },
  // A field's tag given another wire type (issue 57: the decoder's wire-type checks were never
  // exercised): gogo's Unmarshal refuses a known field of the wrong type; an unknown one it skips by its type.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wiretype' as const), pick: fc.nat(), wt: fc.constantFrom(0, 1, 2, 5) }) },
);

/** `bytes` with the mutation applied (a copy): raw bytes written into a string, or one length prefix changed. */
function mutate(desc: DescMessage, bytes: Uint8Array, m: Mutation): Uint8Array {
  if (m.kind === 'none') return bytes;
  const out = Uint8Array.from(bytes);
  if (m.kind === 'wiretype') {
    const tags = tagOffsets(desc, bytes);
    if (tags.length === 0) return out;
    const at = tags[m.pick % tags.length]!;
    // The wire type is the low 3 bits of the tag's first byte: the tag keeps its size.
    out[at] = (out[at]! & ~7) | m.wt;
    return out;
  }
  const fields = delimitedFields(desc, bytes);
  if (m.kind === 'bytes') {
    const strings = fields.filter((f) => f.string && f.end > f.at);
    if (strings.length === 0) return out;
    const f = strings[m.pick % strings.length]!;
    for (let k = 0; k < m.bytes.length && f.at + ((m.offset + k) % (f.end - f.at)) < f.end; k++) out[f.at + ((m.offset + k) % (f.end - f.at))] = m.bytes[k]!;
    return out;
  }
  if (fields.length === 0) return out;
  const f = fields[m.pick % fields.length]!;
  // Same byte count: the first byte's low 7 bits change (a one-byte length becomes any value 0-127).
  out[f.lenAt] = (out[f.lenAt]! & 0x80) | m.value;
  return out;
}

// ---- the two paths -------------------------------------------------------------------------------

type Kind = 'Pod' | 'Node' | 'Lease';
const SCHEMA: Record<Kind, DescMessage> = { Pod: PodSchema, Node: NodeSchema, Lease: LeaseSchema };
const META = { labels: true, annotations: false };

/** The skipping decoder and the converter: a slim object, `undefined` (malformed for the converter) or `'unreadable'`. */
function ours(kind: Kind, bytes: Uint8Array): unknown {
  let view;
  try {
    view = kind === 'Pod' ? podView(bytes, META) : kind === 'Node' ? nodeView(bytes, META) : leaseView(bytes, META);
  } catch {
    return 'unreadable';
  }
  return convert(kind, view);
}

/** The reference: gogo's full decode, the API server's JSON, JSON.parse and the same converter. */
function reference(kind: Kind, bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = messageJson(goDecode(SCHEMA[kind], Buffer.from(bytes)));
  } catch (err) {
    if (err instanceof GoDecodeError) return 'unreadable';
    throw err;
  }
  return convert(kind, JSON.parse(text));
}

function convert(kind: Kind, raw: unknown): unknown {
  return kind === 'Pod' ? toPodWithLabels(raw) : kind === 'Node' ? toNode(raw) : toLease(raw);
}

// ---- properties ----------------------------------------------------------------------------------

describe('the skipping protobuf decoder and the reflective decode + JSON path agree (issue 53)', () => {
  for (const kind of ['Node', 'Pod', 'Lease'] as const) {
    test(`property: any ${kind}, mutated or not, merged with a second or not: the same slim object or the same unreadable verdict`, () => {
      const schema = SCHEMA[kind];
      const encoded = kindArb(kind).map((init) => toBinary(schema, create(schema, init as never)));
      fc.assert(
        fc.property(encoded, mutationArb, fc.option(encoded, { nil: undefined }), mutationArb, (a, ma, b, mb) => {
          const first = mutate(schema, a, ma);
          // Two messages one after the other are one message to proto: the second merges into the first.
          const bytes = b === undefined ? first : Uint8Array.from([...first, ...mutate(schema, b, mb)]);
          const want = reference(kind, bytes);
          const got = ours(kind, bytes);
          assert.deepStrictEqual(got, want);
        }),
        { numRuns: Number(process.env['NLC_WIRE_PROPERTY_RUNS'] ?? 400) },
      );
    });
  }

  test("property: with annotations kept (a watch bookmark's initial-events-end mark), a Pod's metadata view gives the reference JSON's labels, annotations, finalizers, owner references and generation", () => {
    const encoded = kindArb('Pod').map((init) => toBinary(PodSchema, create(PodSchema, init as never)));
    const pick = (m: Record<string, unknown> | undefined): unknown => {
      const out: Record<string, unknown> = {};
      for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences', 'generation', 'name', 'namespace', 'uid']) if (m?.[k] !== undefined) out[k] = m[k];
      return out;
    };
    fc.assert(
      fc.property(encoded, mutationArb, (a, ma) => {
        const bytes = mutate(PodSchema, a, ma);
        let want: unknown;
        try {
          want = pick((JSON.parse(messageJson(goDecode(PodSchema, Buffer.from(bytes)))) as { metadata?: Record<string, unknown> }).metadata);
        } catch (err) {
          if (!(err instanceof GoDecodeError)) throw err;
          want = 'unreadable';
        }
        let got: unknown;
        try {
          got = pick(podView(bytes, { labels: true, annotations: true })['metadata'] as Record<string, unknown> | undefined);
        } catch {
          got = 'unreadable';
        }
        assert.deepStrictEqual(JSON.parse(JSON.stringify(got)), JSON.parse(JSON.stringify(want)));
      }),
      { numRuns: Number(process.env['NLC_WIRE_PROPERTY_RUNS'] ?? 300) },
    );
  });

  test('property: the reference reads what @bufbuild/protobuf reads for well-formed messages (the anchor for the gogo rules)', () => {
    fc.assert(
      fc.property(kindArb('Node'), (init) => {
        const bytes = toBinary(NodeSchema, create(NodeSchema, init as never));
        const node = fromBinary(NodeSchema, bytes);
        let text: string;
        try {
          text = messageJson(goDecode(NodeSchema, Buffer.from(bytes)));
        } catch (err) {
          fc.pre(!(err instanceof GoDecodeError)); // a quantity ParseQuantity refuses: @bufbuild/protobuf has no such rule
          throw err;
        }
        const json = JSON.parse(text) as { metadata?: { name?: string; labels?: Record<string, string> }; status?: { conditions?: { type: string; message?: string }[] } };
        const nz = (s: string | undefined): string | undefined => (s === '' ? undefined : s);
        assert.equal(json.metadata?.name, nz(node.metadata?.name));
        assert.deepEqual(json.metadata?.labels ?? {}, node.metadata?.labels ?? {});
        assert.deepEqual(
          (json.status?.conditions ?? []).map((c) => [c.type, c.message]),
          (node.status?.conditions ?? []).map((c) => [c.type, nz(c.message)]),
        );
      }),
      { numRuns: 100 },
    );
  });

  test('property: strings of any bytes render as the reference renders them (Go encoding/json: U+FFFD per invalid byte)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => {
        const b = Buffer.from(bytes);
        assert.equal(goJsonString(b, 0, b.length), JSON.parse(goJsonText(b)));
      }),
      { numRuns: 2000 },
    );
  });

  test('resource.Quantity: what ParseQuantity accepts (the hand-written Unmarshal fails on the rest)', () => {
    // Verdicts of k8s.io/apimachinery v0.37.2 resource.ParseQuantity, run in Go on 2026-12-07 ("1e2147483648" is left out:
    // its int32 exponent wraps and ParseQuantity does not return).
    const accepted = ['0', '1', '100m', '1Gi', '1.5Ki', '.', '+', '-', 'm', 'Ti', 'e-9', '1e3', '1E', '1.', '.5', '-0.0001n', '000', '0Pi', '.0Pi'];
    const refused = ['', 'Pi', 'Ei', '+Ei', '.Pi', 'e-10', 'E-10', 'e', 'Ki5', '1.5.5', '1x', '1e99999999999999999999', '1 ', ' 1', '1e', '1Kib'];
    for (const s of accepted) assert.equal(quantityParses(s), true, s);
    for (const s of refused) assert.equal(quantityParses(s), false, s);
  });

  test("an unreadable object's name and namespace are read first, only from metadata that reads whole", () => {
    const good = toBinary(PodSchema, create(PodSchema, { metadata: { name: 'p', namespace: 'ns' } }));
    assert.deepEqual(undecodableMeta(Uint8Array.from([...good, 0x12, 0x05, 0x0a])), { name: 'p', namespace: 'ns' });
    assert.deepEqual(undecodableMeta(Uint8Array.of(0x0a, 0x04, 0x0a, 0x05, 0x61, 0x62)), {});
    // Only field 1 is metadata: a Node's spec (field 2) has a string as its field 1 (podCIDR), which
    // read as ObjectMeta would be a name (issue 57, the decoder's mutation run).
    const node = toBinary(NodeSchema, create(NodeSchema, { metadata: { name: 'n1' }, spec: { podCIDR: '10.0.0.0/24', providerID: 'x' } }));
    assert.deepEqual(undecodableMeta(Uint8Array.from([...node, 0x1a, 0x05, 0x0a])), { name: 'n1' });
    // A field 1 of another wire type is not metadata either (skipped by its type).
    assert.deepEqual(undecodableMeta(Uint8Array.from([0x08, 0x05, ...node, 0x1a, 0x05])), { name: 'n1' });
    // Two occurrences of metadata merge, as proto merges them: the second adds the namespace.
    const first = toBinary(PodSchema, create(PodSchema, { metadata: { name: 'p' } }));
    const second = toBinary(PodSchema, create(PodSchema, { metadata: { namespace: 'ns' } }));
    assert.deepEqual(undecodableMeta(Uint8Array.from([...first, ...second, 0x12, 0x05, 0x0a])), { name: 'p', namespace: 'ns' });
  });
});
