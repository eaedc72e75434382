/**
 * Issue 56 item 5, acceptance: the controller's OCI image, built here without a Docker engine
 * (scripts/release/image.ts: umoci from Debian, the Dockerfile's runtime stage, a distroless-style
 * base) and run with runc from Debian against the test control plane, as a Pod runs it:
 * - the image is the Dockerfile's runtime stage: its configuration, three layers (base, COPY, RUN),
 *   Node.js, the bundle and LICENSE root-owned, `nonroot` 65532 and its 0700 home, the code cache,
 *   and no shell or package manager;
 * - as 65532 on a read-only root file system it cannot write its own files, nor anything else;
 * - it answers `--version`, with node accepting the code cache its RUN wrote, and `run` serves
 *   `/healthz` (HTTPS and plain) and `/readyz` once its caches synced from the test control plane
 *   (in `--dry-run`, no election and a node selector matching no node: nothing is written to the
 *   shared cluster), then exits 0 on SIGTERM.
 * Needs root (layer owners, chroot, runc) and the tools scripts/image-tools.sh provisions (apt-get
 * for umoci and runc, scripts/go-tool.sh for crane and cosign); skips, saying why, when either is
 * missing or when runc cannot create a container here (an unprivileged container, for example).
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_PATH } from '../../scripts/release/main.js';
import { buildImage, checkImage, imageTools, ImageStepSkipped, runChecks, runImage, unpackImage, type BuiltImage, type ImageTools, type UnpackedImage } from '../../scripts/release/image.js';
import { packageVersion } from '../../scripts/release/version.js';
import { gitStamp, stampedVersionLine } from '../../src/buildinfo.js';
import { kubeconfigPath } from '../support/cluster.js';
import { ROOT, runCommand } from '../support/command.js';

const version = packageVersion(ROOT);
let skip: string | false = false;
let tools: ImageTools | undefined;
let built: BuiltImage | undefined;
let unpacked: UnpackedImage | undefined;
let work = '';

/** Runs `fn`; a runc that cannot create a container here skips the test, naming its error. */
async function orSkip(t: TestContext, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof ImageStepSkipped)) throw e;
    t.skip(e.message);
  }
}

describe('the OCI image, built with umoci and run with runc', () => {
  before(async () => {
    try {
      tools = imageTools();
    } catch (e) {
      if (!(e instanceof ImageStepSkipped)) throw e;
      skip = e.message;
      return;
    }
    const b = await runCommand('npm', ['run', '-s', 'build:bundle']);
    assert.equal(b.code, 0, b.stderr);
    work = mkdtempSync(join(tmpdir(), 'nlc-image-test-'));
    built = buildImage(tools, { work, version, revision: 'test', epoch: '1764547200', bundle: join(ROOT, BUNDLE_PATH) });
    unpacked = unpackImage(tools, built.layout, built.tag, join(work, 'bundle'));
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("is the Dockerfile's runtime stage: configuration, layers, files, code cache; no shell", (t) => {
    if (skip || !tools || !built) return t.skip(skip || 'no image');
    assert.deepEqual(checkImage(tools, built, work, join(ROOT, BUNDLE_PATH)), []);
    t.diagnostic(`${built.digest}: ${(built.layerBytes / 1024 / 1024).toFixed(1)} MiB compressed; ${JSON.stringify(built.timings)}`);
  });

  test('runs as 65532 in /app on a read-only root file system: nothing in the image is writable, /tmp included (a Pod mounts what it needs)', async (t) => {
    if (skip || !tools || !unpacked) return t.skip(skip || 'no image');
    await orSkip(t, async () => {
      const probe = `const fs = require('node:fs');
        const w = (p) => { try { fs.writeFileSync(p, 'x'); return 'written'; } catch (e) { return e.code; } };
        console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), app: w('/app/node-lifecycle-controller.mjs'), root: w('/x'), tmp: w('/tmp/x'), cwd: process.cwd() }));`;
      const r = await runImage(tools!, unpacked!, ['-e', probe], { entrypoint: ['/nodejs/bin/node'], timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      // runc's read-only root: EROFS on the root file system (the bundle is also root-owned 0644: EACCES would do).
      assert.deepEqual(JSON.parse(r.stdout), { uid: 65532, gid: 65532, app: 'EROFS', root: 'EROFS', tmp: 'EROFS', cwd: '/app' });
    });
  });

  test('answers --version (the code cache accepted) and serves /healthz and /readyz against the test control plane', async (t) => {
    if (skip || !tools || !unpacked) return t.skip(skip || 'no image');
    await orSkip(t, async () => {
      // `npm run build:bundle` stamped the bundle with this checkout's git answer (src/buildinfo.ts).
      const versionLine = stampedVersionLine('node-lifecycle-controller', version, gitStamp(ROOT));
      const r = await runChecks(tools!, unpacked!, { versionLine, kubeconfig: kubeconfigPath(), work });
      assert.deepEqual(r.problems, []);
      for (const n of r.notes) t.diagnostic(n);
    });
  });
});
