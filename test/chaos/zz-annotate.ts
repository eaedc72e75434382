// One-off: mark the soak's faults that failed to start (from its log), then rewrite its .md and .png.
import { readFile } from 'node:fs/promises';
import { writeSoakReport, type SoakReport } from './soak.js';
const [jsonPath, logPath, outDir] = process.argv.slice(2) as [string, string, string];
const r = JSON.parse(await readFile(jsonPath, 'utf8')) as SoakReport & { exit?: string };
if (!r.exits) r.exits = r.exit ? [{ atMs: Number(/at (\d+) s/.exec(r.exit)?.[1] ?? 0) * 1000, code: 1, reason: 'leader election lost (etcd defragmented every 5 s blocked the renewals)' }] : [];
for (const x of r.samples) x.process ??= 0;
const log = await readFile(logPath, 'utf8');
const t0 = Date.parse(r.startedAt);
const day = r.startedAt.slice(0, 10);
for (const m of log.matchAll(/^(\d\d:\d\d:\d\d) fault (.+?) did not start: (.*)$/gm)) {
  const at = Date.parse(`${day}T${m[1]}Z`) - t0;
  const f = r.faults.filter((x) => x.name === m[2]).sort((a, b) => Math.abs(a.startMs - at) - Math.abs(b.startMs - at))[0];
  if (f && Math.abs(f.startMs - at) < 5000) f.startError = `${m[3]} (clusterrolebinding already exists: the noisy neighbour did not run)`;
}
console.log(r.faults.filter((f) => f.startError).length, 'marked');
console.log(await writeSoakReport(r, outDir));
