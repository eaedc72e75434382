/**
 * Decode CPU of the pods informer's two wire formats (src/kube/wire.ts): N copies of one simulator
 * pod (bench fleet shape: `buildPod` plain kind with the kubelet's Running status patch), read once
 * from a real API server in each encoding, then decoded and slimmed (src/kube/objects.ts `toPod`)
 * in-process, as a list page and as watch events:
 *
 * - `list-json`: `JSON.parse` of one PodList body + `toPod` per item (the JSON list path);
 * - `list-protobuf`: `decodeList` of one enveloped PodList + `toPod` per item;
 * - `watch-json`: one `JSON.parse` per `{"type":"ADDED","object":…}` line + `toPod` (client-node's Watch);
 * - `watch-protobuf`: `FrameReader` over the length-delimited stream + `decodeWatchEvent` + `toPod`.
 *
 * No network in the timed part: this is the client's CPU only (the API server's encoding cost is
 * bench/informer-sync.ts `--raw`). Prints one JSON line per round and a summary: CPU ms (user+sys of
 * this process) per variant, median and min–max, and the bytes per pod in each encoding.
 *
 *   KUBECONFIG=… node --import tsx bench/wire-decode.ts [--pods 30060] [--rounds 5] [--cold 9] [--cold-node-options="A;B"]
 *
 * `--cold N` adds `watch-protobuf-cold`: the same watch stream decoded once in each of N fresh
 * processes (run with the image's node option), as a start-up decodes its watch-list before the JIT
 * has warmed up; the CPU counted is the decode's own, not the process's start or module loading.
 * `--cold-node-options` gives those processes' node options as `;`-separated variants (default the
 * image's), each run N times, taking turns: the A/B for V8 flags that change how cold code runs.
 *
 * Needs a running API server (any: it creates one namespace and one pod, and deletes them).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPod, runningPodStatusPatch } from '@node-lifecycle-controller/sim/objects';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { getRaw, loadKubeConfig, makeClients } from '../src/kube/client.js';
import { frame, FrameReader, unwrapEnvelope } from '../src/kube/protobuf/envelope.js';
import { decodeList, decodeWatchEvent } from '../src/kube/protobuf/views.js';
import { toPod } from '../src/kube/objects.js';
import { benchParser, nodeOptionsLabel, nodeOptionVariants, OURS_NODE_OPTIONS } from './lib/options.js';
import { median } from './lib/report.js';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** CPU ms (user + system) that `fn` took, and its result's count (so the work cannot be optimised away). */
function cpuMs(fn: () => number): { ms: number; n: number } {
  const before = process.cpuUsage();
  const n = fn();
  const d = process.cpuUsage(before);
  return { ms: Math.round((d.user + d.system) / 1000), n };
}

/** Protobuf varint of `n`. */
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** The enveloped form of `raw` (`k8s\x00` + runtime.Unknown{typeMeta{apiVersion,kind}, raw}), written by hand. */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const enc = new TextEncoder();
  const str = (no: number, s: Uint8Array): number[] => [(no << 3) | 2, ...varint(s.length), ...s];
  const typeMeta = [...str(1, enc.encode(apiVersion)), ...str(2, enc.encode(kind))];
  const head = Uint8Array.of(0x6b, 0x38, 0x73, 0x00, ...str(1, Uint8Array.from(typeMeta)), 0x12, ...varint(raw.length));
  const out = new Uint8Array(head.length + raw.length);
  out.set(head, 0);
  out.set(raw, head.length);
  return out;
}

/** A WatchEvent{type, object{raw}} message, written by hand. */
function watchEvent(type: string, raw: Uint8Array): Uint8Array {
  const t = new TextEncoder().encode(type);
  const object = [0x0a, ...varint(raw.length)];
  const head = Uint8Array.of(0x0a, ...varint(t.length), ...t, 0x12, ...varint(object.length + raw.length), ...object);
  const out = new Uint8Array(head.length + raw.length);
  out.set(head, 0);
  out.set(raw, head.length);
  return out;
}

const CHUNK = 64 * 1024; // a watch body arrives in chunks

/** The pods informer's protobuf watch path over `stream`: frames, WatchEvent, envelope, view, toPod. @returns pods decoded. */
function decodeWatchStream(stream: Uint8Array): number {
  const r = new FrameReader();
  let c = 0;
  // As the pods informer decodes them: without labels, which toPod does not read.
  for (let at = 0; at < stream.length; at += CHUNK) for (const f of r.push(stream.subarray(at, at + CHUNK))) if (toPod(decodeWatchEvent('Pod', f, false).object)) c++;
  return c;
}

/** `--cold-child FILE`: decode the stream in FILE once, in this fresh process, and print `{cpuMs, n}`. */
function coldChild(file: string): number {
  const stream = new Uint8Array(readFileSync(file));
  const r = cpuMs(() => decodeWatchStream(stream));
  process.stdout.write(`${JSON.stringify({ cpuMs: r.ms, n: r.n })}\n`);
  return 0;
}

async function main(): Promise<number> {
  const child = process.argv.indexOf('--cold-child');
  if (child >= 0) return coldChild(process.argv[child + 1] ?? '');
  const argv = await benchParser(process.argv.slice(2))
    .usage('Usage: bench/wire-decode.ts [flags]\n\nDecode CPU of N pods, JSON vs protobuf, list and watch.')
    .options({
      pods: { type: 'number', default: 30_060 },
      rounds: { type: 'number', default: 5 },
      cold: { type: 'number', default: 0, describe: 'also decode the watch stream once in each of this many fresh processes (cold JIT, as at start-up)' },
      'cold-node-options': {
        type: 'string',
        default: OURS_NODE_OPTIONS,
        describe: "the fresh processes' node options as ';'-separated variants (each space-separated; an empty variant is none), default the image's; pass as --cold-node-options=…",
      },
    })
    .parseAsync();
  if (argv.help === true) return 0;
  const kc = loadKubeConfig(process.env['KUBECONFIG']);
  const clients = makeClients(kc);
  const namespace = `wire-bench-${process.pid}`;
  await clients.core.createNamespace({ body: { metadata: { name: namespace } } });
  let jsonPod: string;
  let pbPod: Uint8Array;
  try {
    await clients.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' }, automountServiceAccountToken: false } });
    const name = 'bench-pod-00000';
    await clients.core.createNamespacedPod({ namespace, body: buildPod({ prefix: 'wb', namespace, name, nodeName: 'wb-node-00000', kind: 'plain', tolerationSeconds: 0 }) });
    await clients.core.patchNamespacedPodStatus(
      { name, namespace, body: runningPodStatusPatch(name, '10.0.0.1', '10.1.0.1', Date.now()) },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const path = `/api/v1/namespaces/${namespace}/pods/${name}`;
    jsonPod = await (await getRaw(kc, path, {})).text();
    const pbRes = await getRaw(kc, path, {}, { accept: PROTOBUF });
    if (pbRes.headers.get('content-type') !== PROTOBUF) throw new Error(`no protobuf: ${pbRes.headers.get('content-type')}`);
    pbPod = unwrapEnvelope(new Uint8Array(await pbRes.arrayBuffer())).raw.slice();
  } finally {
    await clients.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
  const n = argv.pods;
  // Bodies as the API server writes them: a list, and a watch stream of ADDED events.
  const jsonList = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[${Array(n).fill(jsonPod.trim()).join(',')}]}`;
  const listItem = Uint8Array.of(0x12, ...varint(pbPod.length), ...pbPod);
  const listRaw = new Uint8Array(listItem.length * n + 5);
  listRaw.set([0x0a, 3, 0x12, 1, 0x31], 0); // metadata{resourceVersion:"1"}
  for (let i = 0; i < n; i++) listRaw.set(listItem, 5 + i * listItem.length);
  const pbList = envelope('v1', 'PodList', listRaw);
  const jsonWatch = Array(n).fill(`{"type":"ADDED","object":${jsonPod.trim()}}`).join('\n');
  const pbEvent = watchEvent('ADDED', envelope('v1', 'Pod', pbPod));
  const pbWatch = frame(Array<Uint8Array>(n).fill(pbEvent));

  const variants: Record<string, () => number> = {
    'list-json': () => (JSON.parse(jsonList) as { items: unknown[] }).items.map(toPod).length,
    // As the pods informer decodes them: without labels, which toPod does not read.
    'list-protobuf': () => decodeList('Pod', pbList, false).items.map(toPod).length,
    'watch-json': () => {
      let c = 0;
      for (const line of jsonWatch.split('\n')) if (toPod((JSON.parse(line) as { object: unknown }).object)) c++;
      return c;
    },
    'watch-protobuf': () => decodeWatchStream(pbWatch),
  };
  const out = new Map<string, number[]>(Object.keys(variants).map((k) => [k, []]));
  for (let round = 1; round <= argv.rounds; round++) {
    const order = round % 2 === 1 ? Object.keys(variants) : Object.keys(variants).reverse();
    for (const v of order) {
      const r = cpuMs(variants[v]!);
      if (r.n !== n) throw new Error(`${v}: decoded ${r.n} of ${n} pods`);
      out.get(v)?.push(r.ms);
      process.stdout.write(`${JSON.stringify({ variant: v, round, cpuMs: r.ms, pods: n, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) })}\n`);
    }
  }
  if (argv.cold > 0) {
    const dir = mkdtempSync(join(tmpdir(), 'nlc-wire-decode-'));
    const file = join(dir, 'watch.pb');
    writeFileSync(file, pbWatch);
    const variantsOfCold = nodeOptionVariants(argv['cold-node-options']);
    const label = (v: readonly string[]): string => (variantsOfCold.length === 1 ? 'watch-protobuf-cold' : `watch-protobuf-cold [${nodeOptionsLabel(v)}]`);
    for (const v of variantsOfCold) out.set(label(v), []);
    try {
      // Variants take turns within a round, so a change of the machine's load falls on each alike.
      for (let i = 1; i <= argv.cold; i++) {
        for (const v of i % 2 === 1 ? variantsOfCold : [...variantsOfCold].reverse()) {
          const outText = execFileSync(process.execPath, [...v, '--import', 'tsx', import.meta.filename, '--cold-child', file], { encoding: 'utf8' });
          const r = JSON.parse(outText.trim().split('\n').at(-1) ?? '{}') as { cpuMs: number; n: number };
          if (r.n !== n) throw new Error(`${label(v)}: decoded ${r.n} of ${n} pods`);
          out.get(label(v))?.push(r.cpuMs);
          process.stdout.write(`${JSON.stringify({ variant: label(v), round: i, cpuMs: r.cpuMs, pods: n, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) })}\n`);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const summary = (v: number[]): string => `median ${median(v)} ms (${Math.min(...v)}–${Math.max(...v)})`;
  process.stdout.write(
    `${JSON.stringify({
      pods: n,
      bytesPerPod: { json: Buffer.byteLength(jsonPod.trim()), protobuf: pbPod.length },
      ...Object.fromEntries([...out].map(([k, v]) => [k, summary(v)])),
      loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
    })}\n`,
  );
  return 0;
}

if (process.argv[1]?.endsWith('wire-decode.ts')) process.exitCode = await main();
