/**
 * Runs the release's image against the API server of `$KUBECONFIG` (scripts/release/image.ts
 * `runChecks`): the release's image step calls it through scripts/with-control-plane.sh, which
 * reuses the lane's running local control plane or starts one on the NLC_* ports and stops it after.
 *
 *   with-control-plane.sh tsx scripts/release/image-run.ts --layout DIR --tag TAG --version-line LINE --work DIR
 *
 * LINE is what the image's `--version` must print (src/buildinfo.ts `stampedVersionLine` of the
 * bundle it holds).
 *
 * Prints one JSON line, `{problems, notes}` or `{skipped}`; exits 0 when every check passed, 1 on a
 * problem, 3 when runc cannot run a container here (the reason is in `skipped`).
 */
import { parseArgs } from 'node:util';
import { imageTools, ImageStepSkipped, runChecks, unpackImage } from './image.js';
import { join } from 'node:path';
import { rmSync } from 'node:fs';

const { values } = parseArgs({ options: { layout: { type: 'string' }, tag: { type: 'string' }, 'version-line': { type: 'string' }, work: { type: 'string' } } });
const kubeconfig = process.env['KUBECONFIG'];
if (!values.layout || !values.tag || !values['version-line'] || !values.work || !kubeconfig) {
  process.stderr.write('usage: KUBECONFIG=… image-run.ts --layout DIR --tag TAG --version-line LINE --work DIR\n');
  process.exit(2);
}
const bundle = join(values.work, 'runc-bundle');
try {
  const tools = imageTools();
  const unpacked = unpackImage(tools, values.layout, values.tag, bundle);
  const r = await runChecks(tools, unpacked, { versionLine: values['version-line'], kubeconfig, work: values.work });
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exitCode = r.problems.length === 0 ? 0 : 1;
} catch (e) {
  if (!(e instanceof ImageStepSkipped)) throw e;
  process.stdout.write(`${JSON.stringify({ skipped: e.message })}\n`);
  process.exitCode = 3;
} finally {
  rmSync(bundle, { recursive: true, force: true });
}
