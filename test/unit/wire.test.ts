/**
 * The protobuf wire format (src/kube/protobuf/) and the informers' codec (src/kube/wire.ts):
 * envelope and frames, the JSON semantics the views restore, malformed objects and frames, and the
 * JSON fallbacks, against a local HTTP server that answers as an API server would.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { KubeConfig } from '@kubernetes/client-node';
import { makeClients, type RestClientMetricsSink, type WatchStarter } from '../../src/kube/client.js';
import { FrameReader, frame, MAX_FRAME_BYTES, PROTOBUF_MAGIC, unwrapEnvelope, WireFormatError } from '../../src/kube/protobuf/envelope.js';
import { decodeList, decodeObject, decodeWatchEvent } from '../../src/kube/protobuf/views.js';
import { unknownFields, watchEventFields } from '../../src/kube/protobuf/decoder.js';
import { LeaseSchema } from '../../src/kube/protobuf/gen/k8s.io/api/coordination/v1/generated_pb.js';
import { NodeSchema, PodListSchema, PodSchema, PodSpecSchema } from '../../src/kube/protobuf/gen/k8s.io/api/core/v1/generated_pb.js';
import { ObjectMetaSchema, StatusSchema, WatchEventSchema } from '../../src/kube/protobuf/gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb.js';
import { UnknownSchema } from '../../src/kube/protobuf/gen/k8s.io/apimachinery/pkg/runtime/generated_pb.js';
import { toLease, toNode, toPod } from '../../src/kube/objects.js';
import { WireCodec } from '../../src/kube/wire.js';
import { defaultKubeContentType, parseKubeContentType } from '../../src/kube/contenttype.js';
import { rawKey, type ListPage, type ListPageOptions } from '../../src/kube/listwatch.js';
import { UndecodableEventError, UndecodableObject } from '../../src/kube/undecodable.js';
import { silentLogger } from '../../src/log/logger.js';
import { envelope, watchFrame } from '../support/protobuf-wire.js';

// ---- fixtures ---------------------------------------------------------------------------------

const T0 = 1_790_000_000n; // seconds
const time = (s: bigint, nanos = 0): { seconds: bigint; nanos: number } => ({ seconds: s, nanos });

function pod(name: string, extra: MessageInitShape<typeof PodSchema> = {}): MessageInitShape<typeof PodSchema> {
  return {
    // generateName and the container are fields the decoder skips: a wrong skip would misread what follows.
    metadata: { name, generateName: 'web-', selfLink: '', namespace: 'ns', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: time(T0) },
    spec: { containers: [{ name: 'c', image: 'pause' }], nodeName: 'node-a' },
    status: { phase: 'Running' },
    ...extra,
  } as MessageInitShape<typeof PodSchema>;
}

const podBytes = (name: string, extra?: MessageInitShape<typeof PodSchema>): Uint8Array => envelope('Pod', 'v1', PodSchema, pod(name, extra));

// ---- envelope and frames ----------------------------------------------------------------------

describe('envelope and frames', () => {
  test('an envelope without the k8s\\x00 prefix is a wire format error', () => {
    const good = podBytes('p');
    assert.equal(unwrapEnvelope(good).kind, 'Pod');
    assert.throws(() => unwrapEnvelope(good.subarray(4)), WireFormatError);
    assert.throws(() => unwrapEnvelope(Uint8Array.of(0x6b, 0x38, 0x73, 0x01, 0)), WireFormatError);
  });

  test('frames split at any chunk boundary come out whole and in order', () => {
    const messages = [Uint8Array.of(1, 2, 3), new Uint8Array(0), new Uint8Array(1000).fill(7), Uint8Array.of(9)];
    const stream = frame(messages);
    for (const chunkSize of [1, 3, 5, 64, stream.length]) {
      const r = new FrameReader();
      const got: Uint8Array[] = [];
      // Each frame is a view valid until the next push: copied here, as a caller that keeps one must.
      for (let i = 0; i < stream.length; i += chunkSize) got.push(...r.push(stream.subarray(i, i + chunkSize)).map((f) => f.slice()));
      assert.deepEqual(got.map((f) => [...f]), messages.map((m) => [...m]), `chunk size ${chunkSize}`);
      assert.equal(r.pending, 0);
    }
  });

  test('property: any split of any frame sequence gives the frames back, whether read from the chunk or the buffer', () => {
    const messages = fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 12 });
    fc.assert(
      fc.property(messages, fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 20 }), (ms, sizes) => {
        const stream = frame(ms);
        const r = new FrameReader();
        const got: number[][] = [];
        let at = 0;
        for (let i = 0; at < stream.length; i++) {
          const n = sizes[i % sizes.length]!;
          // A fresh copy per chunk, then scribbled over after the push: frames read from the chunk
          // must have been used before the caller reuses it, as #pump does.
          const chunk = stream.slice(at, at + n);
          got.push(...r.push(chunk).map((f) => [...f]));
          chunk.fill(0xee);
          at += n;
        }
        assert.deepEqual(got, ms.map((m) => [...m]));
        assert.equal(r.pending, 0);
      }),
      { numRuns: 300 },
    );
  });

  test("property: the envelope and watch-frame readers read what @bufbuild/protobuf's reflective decoder reads", () => {
    const s = fc.string({ maxLength: 40 });
    fc.assert(
      fc.property(s, s, fc.uint8Array({ maxLength: 64 }), s, s, fc.boolean(), (apiVersion, kind, raw, contentEncoding, contentType, withTypeMeta) => {
        const bytes = toBinary(UnknownSchema, create(UnknownSchema, { ...(withTypeMeta ? { typeMeta: { apiVersion, kind } } : {}), raw, contentEncoding, contentType }));
        const want = fromBinary(UnknownSchema, bytes);
        const got = unknownFields(bytes);
        assert.deepEqual(
          { apiVersion: got.apiVersion, kind: got.kind, raw: [...got.raw], contentEncoding: got.contentEncoding, contentType: got.contentType },
          { apiVersion: want.typeMeta?.apiVersion ?? '', kind: want.typeMeta?.kind ?? '', raw: [...want.raw], contentEncoding: want.contentEncoding, contentType: want.contentType },
        );
        const frameBytes = watchFrame(kind, raw);
        const ev = fromBinary(WatchEventSchema, frameBytes);
        const mine = watchEventFields(frameBytes);
        assert.deepEqual({ type: mine.type, raw: [...mine.raw] }, { type: ev.type, raw: [...(ev.object?.raw ?? [])] });
      }),
      { numRuns: 300 },
    );
  });

  test('a field of the envelope or the watch frame with the wrong wire type is malformed, not misread', () => {
    // Unknown field 2 (raw) as a varint; WatchEvent field 1 (type) as a varint.
    assert.throws(() => unwrapEnvelope(Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x10, 0x01)), WireFormatError);
    assert.throws(() => decodeWatchEvent('Pod', Uint8Array.of(0x08, 0x01)), WireFormatError);
  });

  test('a length prefix over the limit is a wire format error (a garbled stream), not a wait for 4 GiB', () => {
    const header = new Uint8Array(4);
    new DataView(header.buffer).setUint32(0, MAX_FRAME_BYTES + 1, false);
    assert.throws(() => new FrameReader().push(header), WireFormatError);
  });
});

// ---- views: JSON semantics --------------------------------------------------------------------

describe('views restore what JSON says and protobuf does not', () => {
  test('pointer fields set to zero stay set; unset ones stay absent; zero times are absent', () => {
    const withZeros = decodeObject(
      'Pod',
      podBytes('p', {
        metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '7', creationTimestamp: time(T0), deletionTimestamp: time(T0 + 5n, 250_000_000), deletionGracePeriodSeconds: 0n },
        spec: { nodeName: 'n', tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0n }, { operator: 'Exists' }] },
        status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: {} }] },
      }),
    );
    const p = toPod(withZeros);
    assert.ok(p);
    assert.equal(p.deletionGracePeriodSeconds, 0, 'a force delete (grace 0) is not lost');
    // A metav1.Time has whole seconds: its Unmarshal drops the nanoseconds and its JSON has none (issue 53).
    assert.equal(p.deletionTimestamp, Number(T0 + 5n) * 1000);
    assert.deepEqual(p.tolerations, [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 }, { operator: 'Exists' }]);
    assert.deepEqual(p.conditions, [{ type: 'Ready', status: 'False' }], 'a zero lastTransitionTime and empty reason/message are absent, as JSON omits them');
    const plain = toPod(decodeObject('Pod', podBytes('q')));
    assert.ok(plain);
    assert.equal(plain.deletionGracePeriodSeconds, undefined);
    assert.equal(plain.deletionTimestamp, undefined);
  });

  test('labels are skipped where the converter reads none, and the slim Pod is the same', () => {
    const bytes = podBytes('labelled', { metadata: { name: 'labelled', namespace: 'ns', uid: 'u', resourceVersion: '7', creationTimestamp: time(T0), labels: { app: 'web', 'pod-template-hash': 'abc' } } });
    const withLabels = decodeObject('Pod', bytes);
    const without = decodeObject('Pod', bytes, false, false);
    assert.deepEqual((withLabels['metadata'] as Record<string, unknown>)['labels'], { app: 'web', 'pod-template-hash': 'abc' });
    assert.equal((without['metadata'] as Record<string, unknown>)['labels'], undefined);
    assert.deepEqual(toPod(without), toPod(withLabels));
    const page = decodeList('Pod', envelope('PodList', 'v1', PodListSchema, { metadata: { resourceVersion: '9' }, items: [pod('a', { metadata: { name: 'a', namespace: 'ns', uid: 'u', resourceVersion: '7', creationTimestamp: time(T0), labels: { app: 'web' } } })] }), false);
    assert.equal((page.items[0]?.['metadata'] as Record<string, unknown>)['labels'], undefined);
    const ev = decodeWatchEvent('Pod', watchFrame('ADDED', bytes), false);
    assert.equal((ev.object?.['metadata'] as Record<string, unknown>)['labels'], undefined);
  });

  test("a Pod's status.reason survives (pod GC deletes an Evicted terminated pod first)", () => {
    const evicted = toPod(
      decodeObject(
        'Pod',
        podBytes('e', {
          metadata: { name: 'e', namespace: 'ns', uid: 'u', resourceVersion: '7', creationTimestamp: time(T0) },
          spec: { nodeName: 'n' },
          status: { phase: 'Failed', reason: 'Evicted' },
        }),
      ),
    );
    assert.ok(evicted);
    assert.equal(evicted.phase, 'Failed');
    assert.equal(evicted.statusReason, 'Evicted');
    const plain = toPod(decodeObject('Pod', podBytes('q')));
    assert.ok(plain);
    assert.equal(plain.statusReason, undefined, 'an empty reason stays absent, as JSON omits it');
  });

  test('a Lease with an empty holderIdentity keeps it (a pointer), and MicroTime keeps milliseconds', () => {
    const bytes = envelope('Lease', 'coordination.k8s.io/v1', LeaseSchema, {
      metadata: { name: 'n1', namespace: 'kube-node-lease', resourceVersion: '9' },
      spec: { holderIdentity: '', leaseDurationSeconds: 40, renewTime: time(T0, 123_456_789) },
    });
    assert.deepEqual(toLease(decodeObject('Lease', bytes)), {
      namespace: 'kube-node-lease',
      name: 'n1',
      resourceVersion: '9',
      holderIdentity: '',
      leaseDurationSeconds: 40,
      renewTime: Number(T0) * 1000 + 123,
    });
  });

  test('volume sources appear under their JSON keys (claims, CSI drivers, node-local sources)', () => {
    const p = toPod(
      decodeObject(
        'Pod',
        podBytes('v', {
          spec: {
            nodeName: 'n',
            volumes: [
              { name: 'data', volumeSource: { persistentVolumeClaim: { claimName: 'c1' } } },
              { name: 'scratch', volumeSource: { emptyDir: {} } },
              { name: 'eph', volumeSource: { ephemeral: {} } },
              { name: 'inline', volumeSource: { csi: { driver: 'ebs.csi.aws.com' } } },
              { name: 'old', volumeSource: { gcePersistentDisk: { pdName: 'd' } } },
            ],
          },
        }),
      ),
    );
    assert.ok(p);
    assert.deepEqual(p.pvcNames, ['c1']);
    assert.deepEqual(p.ephemeralClaimNames, ['v-eph']);
    assert.deepEqual(p.inlineVolumeDrivers, ['ebs.csi.aws.com', '*']);
  });

  test("property: strings (ASCII, any Unicode, any length) decode as @bufbuild/protobuf's reflective decoder reads them, from a Buffer or a plain Uint8Array", () => {
    const s = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }));
    fc.assert(
      fc.property(s, s, s, s, fc.boolean(), (name, namespace, nodeName, reason, asBuffer) => {
        const init = pod('x', {
          metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: time(T0), labels: { [namespace]: reason } },
          spec: { nodeName, tolerations: [{ key: reason, operator: 'Equal', value: name, effect: 'NoExecute' }] },
          status: { phase: 'Running', reason, conditions: [{ type: 'Ready', status: 'True', reason, message: nodeName }] },
        });
        const bytes = podBytes('x', init);
        const want = fromBinary(PodSchema, unwrapEnvelope(bytes).raw);
        const copy = asBuffer ? Buffer.from(bytes) : new Uint8Array(bytes);
        const v = decodeObject('Pod', copy);
        const m = v['metadata'] as Record<string, unknown>;
        const spec = v['spec'] as { nodeName?: string; tolerations?: Array<Record<string, unknown>> };
        const status = v['status'] as { reason?: string; conditions?: Array<Record<string, unknown>> };
        // Empty strings are omitempty in JSON, so the view leaves them out: compare with that in mind.
        const nz = (x: string): string | undefined => (x === '' ? undefined : x);
        assert.equal(m['name'], nz(want.metadata!.name));
        assert.equal(m['namespace'], nz(want.metadata!.namespace));
        assert.deepEqual(m['labels'], want.metadata!.labels);
        assert.equal(spec.nodeName, nz(want.spec!.nodeName));
        assert.equal(spec.tolerations?.[0]?.['value'], nz(want.spec!.tolerations[0]!.value));
        assert.equal(status.reason, nz(want.status!.reason));
        assert.equal(status.conditions?.[0]?.['message'], nz(want.status!.conditions[0]!.message));
      }),
      { numRuns: 300 },
    );
  });

  test('an envelope of another kind is refused', () => {
    assert.throws(() => decodeObject('Node', podBytes('p')), WireFormatError);
  });
});

// ---- shared lists -----------------------------------------------------------------------------

describe('pods whose tolerations or owner references have the same wire bytes share them (issue 29)', () => {
  type TolerationInit = { key: string; operator: string; value: string; effect: string; tolerationSeconds?: bigint };
  type OwnerInit = { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean };
  const withLists = (name: string, tolerations: TolerationInit[], owners: OwnerInit[]): Uint8Array =>
    podBytes(name, {
      metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: time(T0), ownerReferences: owners },
      spec: { containers: [{ name: 'c', image: 'pause' }], nodeName: 'node-a', tolerations },
    });
  /** The same pod as the API server's JSON has it (omitempty toleration strings, pointer fields only when set). */
  const asJson = (name: string, tolerations: TolerationInit[], owners: OwnerInit[]): unknown => ({
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: '7',
      creationTimestamp: new Date(Number(T0) * 1000).toISOString().replace('.000Z', 'Z'),
      ownerReferences: owners.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, ...(o.controller === undefined ? {} : { controller: o.controller }) })),
    },
    spec: {
      nodeName: 'node-a',
      tolerations: tolerations.map((t) => ({
        ...(t.key ? { key: t.key } : {}),
        ...(t.operator ? { operator: t.operator } : {}),
        ...(t.value ? { value: t.value } : {}),
        ...(t.effect ? { effect: t.effect } : {}),
        ...(t.tolerationSeconds === undefined ? {} : { tolerationSeconds: Number(t.tolerationSeconds) }),
      })),
    },
    status: { phase: 'Running' },
  });
  const DEFAULTS: TolerationInit[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', value: '', effect: 'NoExecute', tolerationSeconds: 300n },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', value: '', effect: 'NoExecute', tolerationSeconds: 300n },
  ];
  const RS: OwnerInit[] = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'rs-uid-1', controller: true }];

  test('two pods of one ReplicaSet get one frozen view list each for tolerations and owners, and one slim list', () => {
    const a = decodeObject('Pod', withLists('web-5d8f-a', DEFAULTS, RS), false, false);
    const b = decodeObject('Pod', withLists('web-5d8f-b', DEFAULTS, RS), false, false);
    const specOf = (v: Record<string, unknown>): Record<string, unknown> => v['spec'] as Record<string, unknown>;
    const metaOf = (v: Record<string, unknown>): Record<string, unknown> => v['metadata'] as Record<string, unknown>;
    assert.equal(specOf(a)['tolerations'], specOf(b)['tolerations'], 'one view list for equal toleration bytes');
    assert.equal(metaOf(a)['ownerReferences'], metaOf(b)['ownerReferences'], 'one view list for equal owner bytes');
    assert.ok(Object.isFrozen(specOf(a)['tolerations']) && Object.isFrozen((specOf(a)['tolerations'] as unknown[])[0]), 'shared views are frozen');
    const pa = toPod(a);
    const pb = toPod(b);
    assert.ok(pa && pb);
    assert.equal(pa.tolerations, pb.tolerations);
    assert.equal(pa.ownerReferences, pb.ownerReferences);
    assert.deepEqual(pa, toPod(asJson('web-5d8f-a', DEFAULTS, RS)), 'the slim Pod is the one JSON gives');
    // JSON's lists are converted on their own and land on the same shared slim lists.
    const pj = toPod(asJson('web-5d8f-c', DEFAULTS, RS));
    assert.equal(pj?.tolerations, pa.tolerations);
    assert.equal(pj?.ownerReferences, pa.ownerReferences);
  });

  test("property: with the shared lists, every pod's slim tolerations and owner references are what JSON gives, the first time and the second", () => {
    const short = fc.constantFrom('', 'k', 'node.kubernetes.io/unreachable', 'Exists', 'Equal', 'NoExecute', 'NoSchedule', 'v', 'é');
    const toleration = fc.record({ key: short, operator: short, value: short, effect: short, tolerationSeconds: fc.option(fc.constantFrom(0n, 1n, 300n, -5n), { nil: undefined }) });
    const owner = fc.record({ apiVersion: fc.constantFrom('', 'apps/v1', 'batch/v1'), kind: fc.constantFrom('', 'ReplicaSet', 'Job'), name: fc.constantFrom('', 'web', 'web-2'), uid: fc.constantFrom('', 'u1', 'u2'), controller: fc.option(fc.boolean(), { nil: undefined }) });
    let n = 0;
    fc.assert(
      fc.property(fc.array(toleration, { maxLength: 4 }), fc.array(owner, { maxLength: 3 }), (tolerations, owners) => {
        const json = toPod(asJson('p', tolerations, owners));
        assert.ok(json);
        for (const name of [`p-${n++}`, `p-${n++}`]) {
          const got = toPod(decodeObject('Pod', withLists(name, tolerations, owners), false, false));
          assert.ok(got);
          assert.deepEqual(got.tolerations, json.tolerations);
          assert.deepEqual(got.ownerReferences, json.ownerReferences);
        }
      }),
      { numRuns: 400 },
    );
  });

  test('tolerations written in two runs (another field between them) decode as one list, merged as proto merges them, and are not shared', () => {
    const [t1, t2] = DEFAULTS;
    // PodSpec bytes: tolerations[t1], nodeName, tolerations[t2] — proto appends a repeated field's runs.
    const spec = Uint8Array.of(
      ...toBinary(PodSpecSchema, create(PodSpecSchema, { tolerations: [t1!] })),
      ...toBinary(PodSpecSchema, create(PodSpecSchema, { nodeName: 'node-a' })),
      ...toBinary(PodSpecSchema, create(PodSpecSchema, { tolerations: [t2!] })),
    );
    const meta = toBinary(ObjectMetaSchema, create(ObjectMetaSchema, { name: 'split', namespace: 'ns', uid: 'u', resourceVersion: '7', creationTimestamp: time(T0) }));
    const raw = Uint8Array.of(0x0a, ...varint(meta.length), ...meta, 0x12, ...varint(spec.length), ...spec);
    const bytes = Uint8Array.of(...PROTOBUF_MAGIC, ...toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion: 'v1', kind: 'Pod' }, raw })));
    assert.deepEqual(fromBinary(PodSchema, raw).spec?.tolerations.map((t) => t.key), [t1!.key, t2!.key], 'the reflective decoder merges the runs');
    const view = decodeObject('Pod', bytes, false, false);
    const list = (view['spec'] as Record<string, unknown>)['tolerations'];
    assert.equal(Object.isFrozen(list), false, 'two runs are decoded on their own');
    assert.deepEqual(toPod(view)?.tolerations, toPod(asJson('split', DEFAULTS, []))?.tolerations);
  });

  test("a node Lease's owner reference (its Node, unique to it) is decoded on its own, never put in the shared table", () => {
    const lease = (rv: string): Uint8Array =>
      envelope('Lease', 'coordination.k8s.io/v1', LeaseSchema, {
        metadata: { name: 'node-a', namespace: 'kube-node-lease', resourceVersion: rv, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'node-uid-a' }] },
        spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40 },
      });
    const owners = (rv: string): unknown => (decodeObject('Lease', lease(rv), false, false)['metadata'] as Record<string, unknown>)['ownerReferences'];
    const first = owners('1');
    const second = owners('2');
    assert.deepEqual(first, [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'node-uid-a' }]);
    assert.notEqual(first, second, 'each renewal gets its own list');
    assert.equal(Object.isFrozen(first), false);
  });

  test('a toleration that does not decode makes its pod malformed every time: a failed decode is never stored', () => {
    const good = toBinary(PodSpecSchema, create(PodSpecSchema, { nodeName: 'node-a' }));
    // PodSpec.tolerations (22, wire type 2) holding Toleration.key (1) with a length past its end.
    const tolerationsNo = PodSpecSchema.field['tolerations']!.number;
    const badSpec = Uint8Array.of(...good, ...varint((tolerationsNo << 3) | 2), 3, 0x0a, 0x7f, 0x01);
    const meta = toBinary(ObjectMetaSchema, create(ObjectMetaSchema, { name: 'bad', namespace: 'ns', uid: 'u', resourceVersion: '7', creationTimestamp: time(T0) }));
    const raw = Uint8Array.of(0x0a, ...varint(meta.length), ...meta, 0x12, ...varint(badSpec.length), ...badSpec);
    const bytes = Uint8Array.of(...PROTOBUF_MAGIC, ...toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion: 'v1', kind: 'Pod' }, raw })));
    assert.throws(() => decodeObject('Pod', bytes));
    assert.throws(() => decodeObject('Pod', bytes), 'the second time too');
  });
});

// ---- malformed messages -----------------------------------------------------------------------

describe('malformed messages reach the cache keyed (issue 53: the wire format never changes a decision)', () => {
  const item = (b: Uint8Array): Uint8Array => Uint8Array.of(0x12, ...varint(b.length), ...b);
  const podList = (...items: Uint8Array[]): Uint8Array => {
    const list = toBinary(PodListSchema, create(PodListSchema, { metadata: { resourceVersion: '42', continue: 'tok' } }));
    const unknown = toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion: 'v1', kind: 'PodList' }, raw: Uint8Array.of(...list, ...items.flatMap((b) => [...item(b)])) }));
    return Uint8Array.of(...PROTOBUF_MAGIC, ...unknown);
  };
  /** A pod's bytes with a readable metadata (name b, namespace ns) and a spec whose container runs past its end. */
  const brokenSpec = (): Uint8Array => {
    const meta = toBinary(ObjectMetaSchema, create(ObjectMetaSchema, { name: 'b', namespace: 'ns', uid: 'u', resourceVersion: '7' }));
    const spec = Uint8Array.of(0x0a, 0x7f, 0x01); // containers (1): a length past the spec's end
    return Uint8Array.of(0x0a, ...varint(meta.length), ...meta, 0x12, ...varint(spec.length), ...spec);
  };

  test('a list item that does not decode is a keyed unreadable object, counted; the rest of the page is kept', () => {
    const good = toBinary(PodSchema, create(PodSchema, pod('a')));
    const page = decodeList('Pod', podList(good, brokenSpec(), Uint8Array.of(0x0a, 0x7f, 0x01), good));
    assert.equal(page.items.length, 4);
    assert.equal(page.malformed, 2);
    assert.deepEqual(page.metadata, { resourceVersion: '42', continue: 'tok' });
    assert.ok(page.items[1] instanceof UndecodableObject);
    assert.deepEqual(page.items[1].metadata, { name: 'b', namespace: 'ns' }, 'the name and namespace are read first');
    assert.equal(rawKey(page.items[1]), 'ns/b');
    assert.ok(page.items[2] instanceof UndecodableObject);
    assert.deepEqual(page.items[2].metadata, {}, 'metadata that does not read whole gives no key');
    assert.equal(toPod(page.items[1]), undefined, 'no converter makes an object of it');
  });

  test('a string that is not valid UTF-8 reads as the API server\'s JSON shows it: U+FFFD per invalid byte (Go), never refused', () => {
    const cases: [bytes: number[], json: string][] = [
      [[0xc3, 0x28], '\uFFFD('], // a lead byte without its continuation
      [[0xe2, 0x82, 0x41], '\uFFFD\uFFFDA'], // a truncated three-byte sequence: two in Go, one in WHATWG
      [[0xef, 0xbb, 0xbf, 0x61], '\uFEFFa'], // a leading BOM is text (TextDecoder would drop it)
      [[0xed, 0xa0, 0x80], '\uFFFD\uFFFD\uFFFD'], // a surrogate
      [[0xc0, 0x80], '\uFFFD\uFFFD'], // an overlong NUL
      [[0xf4, 0x90, 0x80, 0x80], '\uFFFD\uFFFD\uFFFD\uFFFD'], // past U+10FFFF
      [[0xf0, 0x9f, 0x98], '\uFFFD\uFFFD\uFFFD'], // a truncated four-byte sequence
      [[0x61, 0xff, 0xe2, 0x82, 0xac], 'a\uFFFD\u20AC'], // valid runs around an invalid byte stay as they are
    ];
    for (const [bytes, json] of cases) {
      // ObjectMeta.name (1) and namespace (3, "ns") of a pod written by hand.
      const meta = Uint8Array.of(0x0a, bytes.length, ...bytes, 0x1a, 0x02, 0x6e, 0x73, 0x2a, 0x01, 0x75, 0x32, 0x01, 0x37, 0x42, 0x06, 0x08, 0x80, 0xf7, 0xc4, 0xd5, 0x06);
      const page = decodeList('Pod', podList(Uint8Array.of(0x0a, meta.length, ...meta)));
      assert.equal(page.malformed, 0, JSON.stringify(bytes));
      assert.equal(toPod(page.items[0])?.name, json, JSON.stringify(bytes));
    }
  });

  test('a watch event whose object does not decode carries its keyed unreadable object and is marked undecodable; a frame that is no WatchEvent is a stream error', () => {
    const ok = decodeWatchEvent('Pod', watchFrame('ADDED', podBytes('a')));
    assert.equal(ok.type, 'ADDED');
    assert.equal(ok.undecodable, undefined);
    assert.equal(toPod(ok.object)?.name, 'a');
    const unknown = toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion: 'v1', kind: 'Pod' }, raw: brokenSpec() }));
    const keyed = decodeWatchEvent('Pod', watchFrame('DELETED', Uint8Array.of(...PROTOBUF_MAGIC, ...unknown)));
    assert.equal(keyed.type, 'DELETED');
    assert.ok(keyed.object instanceof UndecodableObject);
    assert.deepEqual(keyed.object.metadata, { name: 'b', namespace: 'ns' });
    assert.match(keyed.undecodable ?? '', /DELETED event/);
    const noEnvelope = decodeWatchEvent('Pod', watchFrame('MODIFIED', Uint8Array.of(...PROTOBUF_MAGIC, 0xff, 0xff)));
    assert.ok(noEnvelope.object instanceof UndecodableObject && noEnvelope.undecodable !== undefined);
    assert.deepEqual(noEnvelope.object.metadata, {});
    const badType = decodeWatchEvent('Pod', watchFrame('SOMETHING', podBytes('a')));
    assert.deepEqual([badType.object, typeof badType.undecodable], [undefined, 'string'], "a type client-go's decoder refuses");
    const badStatus = decodeWatchEvent('Pod', watchFrame('ERROR', Uint8Array.of(...PROTOBUF_MAGIC, 0xff)));
    assert.deepEqual([badStatus.object, typeof badStatus.undecodable], [undefined, 'string']);
    assert.throws(() => decodeWatchEvent('Pod', Uint8Array.of(0xff, 0xff, 0xff)), WireFormatError);
  });

  test('an ERROR event carries the Status code the informer reads (410 → relist)', () => {
    const status = envelope('Status', 'v1', StatusSchema, { code: 410, reason: 'Expired', message: 'too old resource version' });
    assert.deepEqual(decodeWatchEvent('Pod', watchFrame('ERROR', status)).object, { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
  });
});

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

// ---- the codec against a local server ----------------------------------------------------------

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('WireCodec', () => {
  let server: Server;
  let handler: Handler = (_req, res) => res.end();
  let base = '';
  before(async () => {
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  /** A codec on a fresh KubeConfig with a recording metrics sink, and JSON stand-ins that record their calls. */
  function codec(contentType?: 'application/json' | 'application/vnd.kubernetes.protobuf') {
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: base, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    const fallbacks: string[] = [];
    const malformed: string[] = [];
    const sink: RestClientMetricsSink = {
      request: () => {},
      rateLimiterWait: () => {},
      wireFallback: (resource, reason) => fallbacks.push(`${resource}:${reason}`),
      wireMalformed: (resource) => malformed.push(resource),
    };
    makeClients(kc, {}, sink);
    const jsonCalls: string[] = [];
    const jsonList = async (_o: ListPageOptions): Promise<ListPage> => {
      jsonCalls.push('list');
      return { metadata: { resourceVersion: 'json' }, items: [] };
    };
    const jsonWatch: WatchStarter = {
      async watch(_p, _q, _cb, done) {
        jsonCalls.push('watch');
        done(null);
        return new AbortController();
      },
    };
    const c = new WireCodec({ kubeConfig: kc, kind: 'Pod', path: '/api/v1/pods', resource: 'pods', jsonList, jsonWatch, log: silentLogger, ...(contentType ? { contentType } : {}) });
    return { c, fallbacks, malformed, jsonCalls };
  }
  const listOpts = (): ListPageOptions => ({ limit: 500, signal: new AbortController().signal });

  test('a protobuf list asks for protobuf and decodes the page', async () => {
    let accept = '';
    handler = (req, res) => {
      accept = req.headers['accept'] ?? '';
      const raw = toBinary(PodListSchema, create(PodListSchema, { metadata: { resourceVersion: '5' }, items: [create(PodSchema, pod('a'))] }));
      const unknown = toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion: 'v1', kind: 'PodList' }, raw }));
      res.setHeader('content-type', 'application/vnd.kubernetes.protobuf');
      res.end(Buffer.from([...PROTOBUF_MAGIC, ...unknown]));
    };
    const { c, fallbacks, jsonCalls } = codec('application/vnd.kubernetes.protobuf');
    const page = await c.list(listOpts());
    assert.equal(accept, 'application/vnd.kubernetes.protobuf,application/json');
    assert.equal(page.metadata?.resourceVersion, '5');
    assert.equal(toPod(page.items[0])?.name, 'a');
    assert.deepEqual(fallbacks, []);
    assert.deepEqual(jsonCalls, []);
    assert.equal(c.protobuf, true);
  });

  for (const status of [406, 415]) {
    test(`a server that refuses protobuf (${status}) gets the same list as JSON at once, counted, and JSON from then on`, async () => {
      let requests = 0;
      handler = (_req, res) => {
        requests++;
        res.statusCode = status;
        res.end('{}');
      };
      const { c, fallbacks, jsonCalls } = codec('application/vnd.kubernetes.protobuf');
      assert.equal((await c.list(listOpts())).metadata?.resourceVersion, 'json');
      assert.deepEqual(fallbacks, ['pods:refused']);
      assert.equal(c.protobuf, false);
      await c.list(listOpts());
      assert.equal(requests, 1, 'no second protobuf request');
      assert.deepEqual(jsonCalls, ['list', 'list']);
    });
  }

  test('a JSON answer to a protobuf request is read as the JSON it is (content-type fallback)', async () => {
    handler = (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ metadata: { resourceVersion: '11' }, items: [] }));
    };
    const { c, fallbacks, jsonCalls } = codec('application/vnd.kubernetes.protobuf');
    assert.equal((await c.list(listOpts())).metadata?.resourceVersion, '11');
    assert.deepEqual(fallbacks, ['pods:content-type']);
    assert.deepEqual(jsonCalls, []);
  });

  test('a protobuf list body that does not decode is fetched again as JSON (decode-error fallback)', async () => {
    handler = (_req, res) => {
      res.setHeader('content-type', 'application/vnd.kubernetes.protobuf');
      res.end(Buffer.from('not protobuf at all'));
    };
    const { c, fallbacks, jsonCalls } = codec('application/vnd.kubernetes.protobuf');
    assert.equal((await c.list(listOpts())).metadata?.resourceVersion, 'json');
    assert.deepEqual(fallbacks, ['pods:decode-error']);
    assert.deepEqual(jsonCalls, ['list']);
  });

  test('other HTTP errors are thrown with their status, not taken for a refusal (a 410 on a continue token stays a 410)', async () => {
    handler = (_req, res) => {
      res.statusCode = 410;
      res.end('{"kind":"Status","code":410}');
    };
    const { c, fallbacks } = codec('application/vnd.kubernetes.protobuf');
    await assert.rejects(c.list(listOpts()), (err: unknown) => (err as { code?: number }).code === 410);
    assert.deepEqual(fallbacks, []);
    assert.equal(c.protobuf, true);
  });

  test('a watch delivers good events, and ends with a decode error at a garbled frame (JSON from then on)', async () => {
    let query = '';
    handler = (req, res) => {
      query = req.url ?? '';
      res.setHeader('content-type', 'application/vnd.kubernetes.protobuf;stream=watch');
      res.write(Buffer.from(frame([watchFrame('ADDED', podBytes('a'))])));
      res.write(Buffer.from(frame([watchFrame('ADDED', podBytes('b'))])));
      res.end(Buffer.from(frame([Uint8Array.of(0xff, 0xff, 0xff)])));
    };
    const { c, fallbacks, malformed, jsonCalls } = codec('application/vnd.kubernetes.protobuf');
    const events: string[] = [];
    const ended = new Promise<unknown>((resolve) => {
      void c.watch('/api/v1/pods', { resourceVersion: '1', allowWatchBookmarks: true }, (type, obj) => events.push(`${type} ${toPod(obj)?.name}`), resolve);
    });
    const err = await ended;
    assert.ok(err instanceof WireFormatError, String(err));
    assert.match(query, /watch=true/);
    assert.deepEqual(events, ['ADDED a', 'ADDED b']);
    assert.deepEqual(malformed, []);
    assert.deepEqual(fallbacks, ['pods:decode-error']);
    // The informer reopens the watch after its backoff: as JSON now.
    await c.watch('/api/v1/pods', {}, () => {}, () => {});
    assert.deepEqual(jsonCalls, ['watch']);
  });

  test('an event whose object does not decode is delivered as its keyed unreadable object, counted, and ends the stream; still protobuf (issue 53)', async () => {
    handler = (_req, res) => {
      res.setHeader('content-type', 'application/vnd.kubernetes.protobuf;stream=watch');
      res.write(Buffer.from(frame([watchFrame('ADDED', podBytes('a'))])));
      res.write(Buffer.from(frame([watchFrame('MODIFIED', Uint8Array.of(...PROTOBUF_MAGIC, 0xff))])));
      // Never read: client-go's StreamWatcher stops at the event it cannot decode, and so does the codec.
      res.end(Buffer.from(frame([watchFrame('ADDED', podBytes('c'))])));
    };
    const { c, fallbacks, malformed, jsonCalls } = codec('application/vnd.kubernetes.protobuf');
    const events: unknown[] = [];
    const err = await new Promise<unknown>((resolve) => void c.watch('/api/v1/pods', {}, (type, obj) => events.push([type, obj instanceof UndecodableObject ? 'undecodable' : toPod(obj)?.name]), resolve));
    assert.ok(err instanceof UndecodableEventError, String(err));
    assert.deepEqual(events, [
      ['ADDED', 'a'],
      ['MODIFIED', 'undecodable'],
    ]);
    assert.deepEqual(malformed, ['pods']);
    assert.deepEqual(fallbacks, [], 'not a reason to leave protobuf: the informer relists');
    assert.deepEqual(jsonCalls, []);
    assert.equal(c.protobuf, true);
  });

  test('a protobuf watch asks for an uncompressed stream; one compressed anyway is reopened as JSON, never read as frames', async () => {
    let acceptEncoding: string | undefined;
    handler = (req, res) => {
      acceptEncoding = req.headers['accept-encoding'];
      res.setHeader('content-type', 'application/vnd.kubernetes.protobuf;stream=watch');
      res.setHeader('content-encoding', 'gzip');
      res.end(gzipSync(Buffer.from(frame([watchFrame('ADDED', podBytes('a'))]))));
    };
    const { c, fallbacks, jsonCalls } = codec('application/vnd.kubernetes.protobuf');
    const events: string[] = [];
    const doneErr = await new Promise<unknown>((resolve) => void c.watch('/api/v1/pods', {}, (type) => events.push(type), resolve));
    assert.equal(acceptEncoding, 'identity');
    assert.equal(doneErr, null, 'the JSON stand-in ended cleanly');
    assert.deepEqual(events, []);
    assert.deepEqual(fallbacks, ['pods:content-type']);
    assert.deepEqual(jsonCalls, ['watch']);
  });

  test('a watch the server refuses (415) is reopened as JSON within the same call', async () => {
    handler = (_req, res) => {
      res.statusCode = 415;
      res.end();
    };
    const { c, fallbacks, jsonCalls } = codec('application/vnd.kubernetes.protobuf');
    const doneErr = await new Promise<unknown>((resolve) => void c.watch('/api/v1/pods', {}, () => {}, resolve));
    assert.equal(doneErr, null, 'the JSON stand-in ended cleanly; no 415 reached the informer');
    assert.deepEqual(fallbacks, ['pods:refused']);
    assert.deepEqual(jsonCalls, ['watch']);
  });

  test('a watch that fails with another status reports it to done with statusCode (the informer decides)', async () => {
    handler = (_req, res) => {
      res.statusCode = 422;
      res.end();
    };
    const { c, fallbacks } = codec('application/vnd.kubernetes.protobuf');
    const err = await new Promise<unknown>((resolve) => void c.watch('/api/v1/pods', { sendInitialEvents: true }, () => {}, resolve));
    assert.equal((err as { statusCode?: number }).statusCode, 422);
    assert.deepEqual(fallbacks, []);
  });

  test('forced JSON never sends a protobuf request', async () => {
    let requests = 0;
    handler = (_req, res) => {
      requests++;
      res.end();
    };
    const { c, fallbacks, jsonCalls } = codec('application/json');
    await c.list(listOpts());
    await c.watch('/api/v1/pods', {}, () => {}, () => {});
    assert.equal(requests, 0);
    assert.deepEqual(jsonCalls, ['list', 'watch']);
    assert.deepEqual(fallbacks, []);
  });
});

describe('content type choice', () => {
  test('--kube-api-content-type values and the NLC_KUBE_API_CONTENT_TYPE default', () => {
    assert.equal(parseKubeContentType(' Application/JSON '), 'application/json');
    assert.equal(parseKubeContentType('application/vnd.kubernetes.protobuf'), 'application/vnd.kubernetes.protobuf');
    assert.equal(parseKubeContentType('application/cbor'), undefined);
    assert.equal(defaultKubeContentType({}), 'application/vnd.kubernetes.protobuf');
    assert.equal(defaultKubeContentType({ NLC_KUBE_API_CONTENT_TYPE: 'application/json' }), 'application/json');
    assert.equal(defaultKubeContentType({ NLC_KUBE_API_CONTENT_TYPE: 'nonsense' }), 'application/vnd.kubernetes.protobuf');
  });
});

// Pinned by mutation testing (docs/safety.md, "Mutation testing", the decoder): no unit test decoded
// a Node from protobuf (only the integration lanes did), so the mutants of nodeView had no coverage.
// A Node's taints and Ready condition are what every node lifecycle and taint eviction decision
// reads: the protobuf view must convert to the same slim Node as the JSON object.
describe('a Node from protobuf is the Node JSON gives', () => {
  test('spec.unschedulable, taints with timeAdded, status conditions with their times, a skipped field between them', () => {
    const bytes = envelope('Node', 'v1', NodeSchema, {
      metadata: { name: 'node-a', uid: 'uid-a', resourceVersion: '9', creationTimestamp: time(T0), labels: { 'topology.kubernetes.io/zone': 'z1' } },
      spec: {
        podCIDR: '10.0.0.0/24',
        unschedulable: true,
        taints: [
          { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: time(T0 + 5n) },
          { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
        ],
      },
      status: {
        capacity: { cpu: { string: '4' } },
        conditions: [
          { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: time(T0 + 1n), lastTransitionTime: time(T0), reason: 'KubeletHasSufficientMemory', message: 'ok' },
          { type: 'Ready', status: 'Unknown', lastHeartbeatTime: time(T0 + 2n), lastTransitionTime: time(T0 + 3n), reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' },
        ],
      },
    } as MessageInitShape<typeof NodeSchema>);
    const iso = (s: bigint): string => new Date(Number(s) * 1000).toISOString();
    const json = {
      metadata: { name: 'node-a', uid: 'uid-a', resourceVersion: '9', creationTimestamp: iso(T0), labels: { 'topology.kubernetes.io/zone': 'z1' } },
      spec: {
        unschedulable: true,
        taints: [
          { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: iso(T0 + 5n) },
          { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
        ],
      },
      status: {
        conditions: [
          { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: iso(T0 + 1n), lastTransitionTime: iso(T0), reason: 'KubeletHasSufficientMemory', message: 'ok' },
          { type: 'Ready', status: 'Unknown', lastHeartbeatTime: iso(T0 + 2n), lastTransitionTime: iso(T0 + 3n), reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' },
        ],
      },
    };
    const fromProtobuf = toNode(decodeObject('Node', bytes));
    assert.ok(fromProtobuf);
    assert.deepEqual(fromProtobuf, toNode(json));
    assert.equal(fromProtobuf.taints.length, 2);
    assert.equal(fromProtobuf.conditions.find((c) => c.type === 'Ready')?.status, 'Unknown');
  });

  test('a top-level field of a newer API (number 4, a varint or bytes shaped like a condition) is skipped, not read as the status; a status field of the wrong wire type makes the Node unreadable, as gogo refuses it', () => {
    const node = { metadata: { name: 'n', uid: 'u', resourceVersion: '1', creationTimestamp: time(T0) }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    const known = toBinary(NodeSchema, create(NodeSchema, node as MessageInitShape<typeof NodeSchema>));
    const withExtra = (extra: readonly number[]): Uint8Array => {
      const raw = Uint8Array.of(...known, ...extra);
      const unknown = toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion: 'v1', kind: 'Node' }, raw }));
      return Uint8Array.of(...PROTOBUF_MAGIC, ...unknown);
    };
    for (const extra of [[0x20, 0x01], [0x22, 0x02, 0x22, 0x00]]) {
      const got = toNode(decodeObject('Node', withExtra(extra)));
      assert.deepEqual(got?.conditions.map((c) => [c.type, c.status]), [['Ready', 'True']], `extra bytes ${extra.join(',')}`);
    }
    // Node field 3 (status) as a varint: gogo's Node.Unmarshal answers "wrong wireType = 0 for field Status" (issue 53: the same verdict as upstream).
    assert.throws(() => decodeObject('Node', withExtra([0x18, 0x01])), /field 3: wire type 0, expected 2/);
  });

  test('a schedulable Node without status decodes without conditions', () => {
    const node = toNode(decodeObject('Node', envelope('Node', 'v1', NodeSchema, { metadata: { name: 'n', uid: 'u', resourceVersion: '1', creationTimestamp: time(T0) }, spec: { unschedulable: false } })));
    assert.equal(node?.unschedulable, false);
    assert.deepEqual(node?.conditions, []);
  });

  test('a length-delimited field running past the end of its message is malformed, and says so', () => {
    // Pod field 1 (metadata, wire type 2) announcing 100 bytes, with 2 to follow.
    const raw = Uint8Array.of(0x0a, 100, 0x01, 0x02);
    const unknown = toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion: 'v1', kind: 'Pod' }, raw }));
    assert.throws(() => decodeObject('Pod', Uint8Array.of(...PROTOBUF_MAGIC, ...unknown)), /length past the end of its message/);
  });
});
