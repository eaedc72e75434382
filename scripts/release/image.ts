/**
 * The controller's OCI image, built, run and signed here without a Docker engine (docs/release.md
 * "The image, built and run here"):
 *
 * - **build** ({@link buildImage}): umoci (Debian) writes an OCI image layout whose configuration is
 *   the Dockerfile's runtime stage (scripts/release/dockerfile.ts `runtimeImageSpec`: user, working
 *   directory, environment, entrypoint, labels, exposed port) and whose layers are
 *   1. a distroless-style base: the Debian packages distroless's `nodejs` images hold (libc6,
 *      libgcc-s1, libstdc++6, ca-certificates' bundle, tzdata, netbase, os-release), Node.js at
 *      `/nodejs/bin/node` (the npm `node` package's binary, the one every test runs on), `/etc/passwd`
 *      with `nonroot` 65532, `/home/nonroot` (0700, its own), `/tmp`; no shell, no package manager;
 *   2. the Dockerfile's COPYs: the bundle and LICENSE under `/app`, root-owned;
 *   3. the Dockerfile's RUN: the bundle's V8 code cache, written by the ENTRYPOINT's node as 65532.
 *   gcr.io/distroless cannot be pulled (no registry but npm, Debian and the Go proxy is reachable),
 *   so the base is assembled from the machine's Debian packages, which are Debian 12's, where the
 *   Dockerfile's base is Debian 13's;
 * - **run** ({@link runImage}): runc (Debian) runs the unpacked image as the Pod would (user 65532,
 *   read-only root file system, the host's network namespace so it reaches a local API server);
 * - **sign** ({@link signImage}): crane (go-containerregistry) serves a registry on 127.0.0.1, the
 *   image is pushed there, cosign signs it and attests its SBOM with a key pair generated for the
 *   run, verifies both, and saves image, signature and attestation as one OCI layout, the archive.
 *
 * Root is needed (layer owners 65532, chroot, the OCI runtime). Only the build machine's
 * architecture is built (the release workflow builds linux/amd64 and linux/arm64 with buildx).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { must, ROOT, sh } from './exec.js';
import { parseDockerfile, runtimeImageSpec, type DockerStage, type RuntimeImageSpec } from './dockerfile.js';

/** A step that cannot run here (not a failure of what it checks): the reason is printed and the step counted as skipped. */
export class ImageStepSkipped extends Error {}

/** Paths of the image tools (scripts/image-tools.sh). */
export interface ImageTools {
  umoci: string;
  runc: string;
  crane: string;
  cosign: string;
}

/**
 * Debian packages of the base layer: what node needs (`ldd`: libc6, libstdc++6, libgcc-s1) and what
 * distroless's base holds besides (CA certificates, time zones, /etc/services and /etc/protocols,
 * os-release).
 */
export const IMAGE_DEBIAN_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6', 'ca-certificates', 'tzdata', 'netbase', 'base-files'] as const;

/** Paths removed from the extracted packages: documentation (but each package's copyright), man pages, the CA bundle's sources and tools, iconv modules. */
const PRUNED = ['usr/share/man', 'usr/share/lintian', 'usr/share/gdb', 'usr/share/gcc', 'usr/share/ca-certificates', 'usr/sbin', 'usr/bin', 'usr/lib/x86_64-linux-gnu/gconv', 'usr/lib/aarch64-linux-gnu/gconv', 'etc/ca-certificates', 'etc/ca-certificates.conf'];
/** The files base-files contributes (distroless keeps only these of it). */
const BASE_FILES_KEPT = ['etc/os-release', 'usr/lib/os-release', 'etc/debian_version'];

/** One Debian package in the image. */
export interface DebPackage {
  name: string;
  version: string;
  architecture: string;
  /** The .deb's sha256. */
  sha256: string;
}

/** The image as built. */
export interface BuiltImage {
  /** The OCI image layout directory. */
  layout: string;
  /** Its tag in the layout (the version). */
  tag: string;
  /** The manifest's digest, `sha256:…`. */
  digest: string;
  /** `amd64` or `arm64`. */
  architecture: string;
  /** Debian's major version of the base layer's packages (the machine's). */
  debian: string;
  debs: DebPackage[];
  node: { version: string; npmPackage: string; npmVersion: string };
  /** The Dockerfile's runtime stage, as built. */
  spec: RuntimeImageSpec;
  /** Compressed size of the layers, bytes. */
  layerBytes: number;
  /** Seconds each phase took. */
  timings: Record<string, number>;
}

/**
 * Provisions the tools through scripts/image-tools.sh.
 * @throws {ImageStepSkipped} when not root (the layers' owners, chroot and runc need it) or when
 *   the tools cannot be installed here, with the script's reason.
 */
export function imageTools(): ImageTools {
  if (process.getuid?.() !== 0) throw new ImageStepSkipped('building and running the image needs root (layer files owned by 65532, chroot, runc); run the release as root to include it');
  const r = sh('bash', ['scripts/image-tools.sh'], { timeoutMs: 30 * 60_000 });
  if (r.status !== 0) throw new ImageStepSkipped(`scripts/image-tools.sh could not provision the image tools: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`);
  const paths = Object.fromEntries(r.stdout.split('\n').filter((l) => l.includes('=')).map((l) => l.split('=', 2) as [string, string]));
  for (const k of ['umoci', 'runc', 'crane', 'cosign']) if (!paths[k]) throw new Error(`scripts/image-tools.sh printed no ${k}`);
  return paths as unknown as ImageTools;
}

/** The OCI architecture of this machine. */
export function ociArchitecture(): string {
  return process.arch === 'x64' ? 'amd64' : process.arch;
}

/** `sha256:` + hex of a file. */
function fileDigest(path: string): string {
  return `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
}

/**
 * The Debian packages of the base layer, from the machine's apt sources, cached by file name in
 * `~/.cache/node-lifecycle-controller/image/debs/` (a new point release downloads the new version).
 * @throws {Error} when apt cannot say or fetch a package.
 */
export function fetchDebs(names: readonly string[] = IMAGE_DEBIAN_PACKAGES): { file: string; pkg: DebPackage; control: string }[] {
  const cache = join(process.env['NLC_CACHE_DIR'] ?? join(homedir(), '.cache', 'node-lifecycle-controller'), 'image', 'debs');
  mkdirSync(cache, { recursive: true });
  // One apt-cache call for all (each loads apt's whole cache: seconds on a busy machine).
  const records = must('apt-cache', ['show', '--no-all-versions', ...names]).split(/\n\n+/);
  return names.map((name) => {
    const show = records.find((r) => new RegExp(`^Package: ${name.replace(/[+.]/g, '\\$&')}$`, 'm').test(r)) ?? '';
    const filename = /^Filename: (\S+)$/m.exec(show)?.[1];
    if (!filename) throw new Error(`apt-cache show ${name}: no Filename (run apt-get update)`);
    const file = join(cache, basename(filename));
    if (!existsSync(file)) {
      // As root apt drops to _apt for the download, which may not write here: keep it as root.
      must('apt-get', ['download', '-o', 'APT::Sandbox::User=root', name], { cwd: cache });
      if (!existsSync(file)) throw new Error(`apt-get download ${name} wrote no ${basename(file)}`);
    }
    const control = must('dpkg-deb', ['-f', file]);
    const field = (f: string): string => new RegExp(`^${f}: (.*)$`, 'm').exec(control)?.[1] ?? '';
    return { file, control, pkg: { name: field('Package'), version: field('Version'), architecture: field('Architecture'), sha256: fileDigest(file).slice(7) } };
  });
}

/** Sets every path under `dir` (and `dir`) to mtime `epoch` seconds, symlinks included. */
function touchAll(dir: string, epoch: string): void {
  must('find', [dir, '-exec', 'touch', '-h', '-d', `@${epoch}`, '{}', '+']);
}

/** Writes `text` to `path` with `mode`, owned by root. */
function put(path: string, text: string, mode = 0o644): void {
  writeFileSync(path, text);
  chmodSync(path, mode);
}

/**
 * The distroless-style base file system in `dir`: the packages extracted and pruned, the CA
 * bundle, the users, Node.js, the home directory and /tmp, and each package's control file in
 * `/var/lib/dpkg/status.d/` (where distroless lists its packages for scanners).
 * @returns the node binary's version (`v24.21.0`) and the npm package it came from.
 */
function stageBase(dir: string, debs: { file: string; pkg: DebPackage; control: string }[], nodeUser: { uid: number; gid: number }): BuiltImage['node'] {
  for (const d of debs) {
    if (d.pkg.name === 'base-files') {
      const tmp = mkdtempSync(join(tmpdir(), 'nlc-image-basefiles-'));
      try {
        must('dpkg-deb', ['-x', d.file, tmp]);
        for (const f of BASE_FILES_KEPT) {
          const src = join(tmp, f);
          if (!existsSync(src) && !lstatSync(src, { throwIfNoEntry: false })) continue;
          mkdirSync(join(dir, f, '..'), { recursive: true });
          must('cp', ['-a', src, join(dir, f)]);
        }
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    } else {
      must('dpkg-deb', ['-x', d.file, dir]);
    }
  }
  // The CA bundle update-ca-certificates would write (distroless ships it alone, no sources or tools).
  const crts = must('find', [join(dir, 'usr/share/ca-certificates'), '-name', '*.crt']).split('\n').filter(Boolean).sort();
  mkdirSync(join(dir, 'etc/ssl/certs'), { recursive: true });
  put(join(dir, 'etc/ssl/certs/ca-certificates.crt'), crts.map((c) => readFileSync(c, 'utf8')).join(''));
  for (const p of PRUNED) rmSync(join(dir, p), { recursive: true, force: true });
  // Documentation: each package's copyright (its licence) stays.
  const docs = join(dir, 'usr/share/doc');
  if (existsSync(docs)) {
    must('find', [docs, '(', '-type', 'f', '-o', '-type', 'l', ')', '!', '-name', 'copyright', '-delete']);
    must('find', [docs, '-mindepth', '1', '-type', 'd', '-empty', '-delete']);
  }
  mkdirSync(join(dir, 'var/lib/dpkg/status.d'), { recursive: true });
  for (const d of debs) put(join(dir, 'var/lib/dpkg/status.d', d.pkg.name), d.control);
  // distroless's users and name service configuration.
  put(join(dir, 'etc/passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n');
  put(join(dir, 'etc/group'), 'root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n');
  put(join(dir, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n');
  mkdirSync(join(dir, 'root'));
  chmodSync(join(dir, 'root'), 0o700);
  mkdirSync(join(dir, 'home/nonroot'), { recursive: true });
  chmodSync(join(dir, 'home/nonroot'), 0o700);
  chownSync(join(dir, 'home/nonroot'), nodeUser.uid, nodeUser.gid);
  mkdirSync(join(dir, 'tmp'));
  chmodSync(join(dir, 'tmp'), 0o1777);
  // Node.js where distroless puts it, with its licence: the npm `node` package's platform binary.
  const npmPkgDir = join(ROOT, 'node_modules/node/node_modules', `node-${process.platform}-${process.arch}`);
  const npm = JSON.parse(readFileSync(join(npmPkgDir, 'package.json'), 'utf8')) as { name: string; version: string };
  mkdirSync(join(dir, 'nodejs/bin'), { recursive: true });
  copyFileSync(join(npmPkgDir, 'bin/node'), join(dir, 'nodejs/bin/node'));
  chmodSync(join(dir, 'nodejs/bin/node'), 0o755);
  copyFileSync(join(npmPkgDir, 'LICENSE'), join(dir, 'nodejs/LICENSE'));
  chmodSync(join(dir, 'nodejs/LICENSE'), 0o644);
  // /lib64/ld-linux… is in libc6; a merged /usr is not needed by anything here.
  if (!existsSync(join(dir, 'etc/os-release')) && existsSync(join(dir, 'usr/lib/os-release'))) symlinkSync('../usr/lib/os-release', join(dir, 'etc/os-release'));
  return { version: `v${npm.version}`, npmPackage: npm.name, npmVersion: npm.version };
}

/**
 * Where a runtime-stage COPY's source is in this checkout: a path of the build stage under its
 * WORKDIR (the build stage copies the repository there and builds in place, so `/app/dist/…` is
 * `dist/…` here, the output of the same npm scripts), or a path of the build context.
 * @throws {Error} for a stage that is not the build stage or a path outside its WORKDIR.
 */
export function copySource(stages: readonly DockerStage[], c: RuntimeImageSpec['copies'][number]): string {
  if (c.from === undefined) return join(ROOT, c.src);
  const stage = stages.find((st) => st.name === c.from);
  const workdir = stage?.body.filter((i) => i.op === 'WORKDIR').at(-1)?.args;
  if (!stage || !workdir || !c.src.startsWith(`${workdir.replace(/\/$/, '')}/`)) throw new Error(`COPY --from=${c.from} ${c.src}: not a path under the build stage's WORKDIR`);
  return join(ROOT, c.src.slice(workdir.replace(/\/$/, '').length + 1));
}

/** The umoci `config` flags for the Dockerfile's runtime configuration. */
function configFlags(spec: RuntimeImageSpec, architecture: string, createdIso: string, baseNote: string): string[] {
  const flags = [`--config.user=${spec.user}`, `--config.workingdir=${spec.workdir}`, `--architecture=${architecture}`, '--os=linux', `--created=${createdIso}`, '--author=node-lifecycle-controller release (scripts/release/image.ts)'];
  for (const [k, v] of spec.env) flags.push(`--config.env=${k}=${v}`);
  for (const a of spec.entrypoint) flags.push(`--config.entrypoint=${a}`);
  for (const a of spec.cmd) flags.push(`--config.cmd=${a}`);
  for (const p of spec.exposedPorts) flags.push(`--config.exposedports=${p}`);
  for (const [k, v] of spec.labels) {
    // The base is not the Dockerfile's distroless image: say what it is instead of naming that one.
    if (k === 'org.opencontainers.image.base.name' || k === 'org.opencontainers.image.base.digest') continue;
    flags.push(`--config.label=${k}=${v}`);
  }
  flags.push(`--config.label=dev.node-lifecycle-controller.image.base=${baseNote}`);
  return flags;
}

/** The layout's index entry for `tag`: the manifest digest. @throws when absent. */
export function manifestDigest(layout: string, tag: string): string {
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string; annotations?: Record<string, string> }[] };
  const m = index.manifests.find((x) => x.annotations?.['org.opencontainers.image.ref.name'] === tag);
  if (!m) throw new Error(`${layout}: no manifest tagged ${tag}`);
  return m.digest;
}

/** A blob of the layout, parsed as JSON. */
export function readBlob<T>(layout: string, digest: string): T {
  return JSON.parse(readFileSync(join(layout, 'blobs', ...digest.split(':')), 'utf8')) as T;
}

/**
 * Builds the image (see the module comment) into `<work>/layout`, tag `version`.
 * @param opts.bundle the controller bundle (`npm run build:bundle`'s output), which the Dockerfile's
 *   COPY names as the build stage's `/app/dist/bundle/…` (checked by {@link checkImage}).
 * @param opts.revision the git commit (the REVISION build argument); opts.epoch SOURCE_DATE_EPOCH
 *   (seconds): every file's mtime and the `created` times.
 * @throws {Error} when a tool fails.
 */
export function buildImage(tools: ImageTools, opts: { work: string; version: string; revision: string; epoch: string; bundle: string }): BuiltImage {
  const timings: Record<string, number> = {};
  const phase = <T>(name: string, fn: () => T): T => {
    const t0 = Date.now();
    try {
      return fn();
    } finally {
      timings[name] = (Date.now() - t0) / 1000;
    }
  };
  const createdIso = new Date(Number(opts.epoch) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const spec = runtimeImageSpec(stages, { VERSION: opts.version, REVISION: opts.revision, CREATED: createdIso });
  const [uid = 0, gid = 0] = spec.user.split(':').map(Number);
  const architecture = ociArchitecture();
  const layout = join(opts.work, 'layout');
  const tag = opts.version;
  const image = `${layout}:${tag}`;
  const umoci = (args: string[]): string => must(tools.umoci, args);

  const debs = phase('debian packages', () => fetchDebs());
  const base = join(opts.work, 'base');
  const app = join(opts.work, 'app');
  rmSync(base, { recursive: true, force: true });
  rmSync(app, { recursive: true, force: true });
  mkdirSync(base, { recursive: true });
  const node = phase('stage base', () => stageBase(base, debs, { uid, gid }));
  const debian = /^VERSION_ID="?(\d+)/m.exec(readFileSync(join(base, 'usr/lib/os-release'), 'utf8'))?.[1] ?? '?';
  const baseNote = `distroless-style: Debian ${debian} packages (${debs.map((d) => d.pkg.name).join(', ')}) and Node.js ${node.version} (npm ${node.npmPackage}), assembled by scripts/release/image.ts`;
  // The Dockerfile's COPYs: the bundle and LICENSE, root-owned and read-only to the runtime user.
  for (const c of spec.copies) {
    const src = copySource(stages, c);
    if (!existsSync(src)) throw new Error(`the Dockerfile copies ${c.src}${c.from ? ` from stage ${c.from}` : ''}, which is ${src} here and does not exist (build it first)`);
    const dest = join(app, c.dest);
    mkdirSync(join(dest, '..'), { recursive: true });
    copyFileSync(src, dest);
    chmodSync(dest, 0o644);
  }
  touchAll(base, opts.epoch);
  touchAll(app, opts.epoch);

  rmSync(layout, { recursive: true, force: true });
  phase('layers (umoci)', () => {
    umoci(['init', '--layout', layout]);
    umoci(['new', '--image', image]);
    umoci(['insert', '--image', image, `--history.created=${createdIso}`, `--history.created_by=${baseNote}`, base, '/']);
    umoci(['config', '--image', image, `--history.created=${createdIso}`, '--history.created_by=the Dockerfile runtime stage: USER, WORKDIR, ENV, ENTRYPOINT, CMD, EXPOSE, LABEL', ...configFlags(spec, architecture, createdIso, baseNote)]);
    umoci(['insert', '--image', image, `--history.created=${createdIso}`, `--history.created_by=COPY ${spec.copies.map((c) => c.dest).join(' ')}`, app, '/']);
  });
  // The Dockerfile's RUN (exec form, after USER): run in the image's file system as its user. chroot
  // cannot set the working directory, so a relative script argument is made absolute under WORKDIR,
  // which names the same file (node keys its code cache by the resolved file URL).
  const bundleDir = join(opts.work, 'run-bundle');
  phase('RUN (chroot as the image user)', () => {
    rmSync(bundleDir, { recursive: true, force: true });
    umoci(['unpack', '--image', image, bundleDir]);
    const rootfs = join(bundleDir, 'rootfs');
    for (const run of spec.runs) {
      const args = run.map((a, i) => (i > 0 && !a.startsWith('-') && !a.startsWith('/') && existsSync(join(rootfs, spec.workdir, a)) ? `${spec.workdir}/${a}` : a));
      const env = Object.fromEntries([['HOME', '/home/nonroot'], ['PATH', '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], ...spec.env]);
      must(existsSync('/usr/sbin/chroot') ? '/usr/sbin/chroot' : 'chroot', [`--userspec=${spec.user}`, rootfs, ...args], { env, cleanEnv: true });
    }
    touchAll(join(rootfs, 'home/nonroot'), opts.epoch);
    umoci(['repack', '--image', image, `--history.created=${createdIso}`, `--history.created_by=RUN ${JSON.stringify(spec.runs[0] ?? [])}`, bundleDir]);
    umoci(['gc', '--layout', layout]);
  });
  rmSync(bundleDir, { recursive: true, force: true });
  const digest = manifestDigest(layout, tag);
  const manifest = readBlob<{ layers: { size: number }[] }>(layout, digest);
  return { layout, tag, digest, architecture, debian, debs: debs.map((d) => d.pkg), node, spec, layerBytes: manifest.layers.reduce((n, l) => n + l.size, 0), timings };
}

/**
 * What the image's configuration and file system must be; one message per problem.
 * @param bundle the controller bundle built here, which one of the Dockerfile's COPYs must carry.
 */
export function checkImage(tools: ImageTools, built: BuiltImage, work: string, bundle: string): string[] {
  const problems: string[] = [];
  const manifest = readBlob<{ config: { digest: string }; layers: unknown[] }>(built.layout, built.digest);
  const config = readBlob<{ architecture: string; os: string; config: { User?: string; WorkingDir?: string; Env?: string[]; Entrypoint?: string[]; Cmd?: string[] | null; ExposedPorts?: Record<string, unknown>; Labels?: Record<string, string> } }>(built.layout, manifest.config.digest);
  const c = config.config;
  const spec = built.spec;
  if (manifest.layers.length !== 3) problems.push(`${manifest.layers.length} layers, want 3 (base, COPY, RUN)`);
  if (config.os !== 'linux' || config.architecture !== built.architecture) problems.push(`platform ${config.os}/${config.architecture}`);
  if (c.User !== spec.user) problems.push(`User ${c.User}, the Dockerfile says ${spec.user}`);
  if (c.WorkingDir !== spec.workdir) problems.push(`WorkingDir ${c.WorkingDir}, the Dockerfile says ${spec.workdir}`);
  if (JSON.stringify(c.Entrypoint) !== JSON.stringify(spec.entrypoint)) problems.push(`Entrypoint ${JSON.stringify(c.Entrypoint)}, the Dockerfile says ${JSON.stringify(spec.entrypoint)}`);
  if ((c.Cmd ?? []).length !== spec.cmd.length) problems.push(`Cmd ${JSON.stringify(c.Cmd)}`);
  for (const [k, v] of spec.env) if (!(c.Env ?? []).includes(`${k}=${v}`)) problems.push(`Env lacks ${k}=${v}`);
  for (const p of spec.exposedPorts) if (!c.ExposedPorts?.[p]) problems.push(`ExposedPorts lacks ${p}`);
  for (const [k, v] of spec.labels) if (!k.startsWith('org.opencontainers.image.base.') && c.Labels?.[k] !== v) problems.push(`label ${k}=${c.Labels?.[k]}, the Dockerfile says ${v}`);
  // The file system, as the runtime will see it.
  const dir = join(work, 'check-bundle');
  rmSync(dir, { recursive: true, force: true });
  must(tools.umoci, ['unpack', '--image', `${built.layout}:${built.tag}`, dir]);
  try {
    const rootfs = join(dir, 'rootfs');
    const at = (p: string) => join(rootfs, p);
    for (const p of ['nodejs/bin/node', 'nodejs/LICENSE', 'app/LICENSE', 'etc/ssl/certs/ca-certificates.crt', 'etc/os-release', 'lib64/ld-linux-x86-64.so.2', 'usr/share/zoneinfo/UTC', 'etc/services'].filter((p) => built.architecture === 'amd64' || !p.startsWith('lib64'))) {
      if (!existsSync(at(p))) problems.push(`/${p} is missing`);
    }
    for (const sh of ['bin/sh', 'bin/bash', 'bin/dash', 'usr/bin/sh', 'usr/bin/dpkg', 'usr/bin/apt', 'usr/bin/apt-get']) if (existsSync(at(sh)) || lstatSync(at(sh), { throwIfNoEntry: false })) problems.push(`/${sh} is in the image: distroless has no shell or package manager`);
    // Each COPY holds what the Dockerfile names, as built here; the bundle is one of them.
    const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    for (const c of spec.copies) {
      const here = copySource(stages, c);
      if (!existsSync(join(rootfs, c.dest)) || fileDigest(join(rootfs, c.dest)) !== fileDigest(here)) problems.push(`${c.dest} is not ${here}`);
    }
    if (!spec.copies.some((c) => copySource(stages, c) === bundle)) problems.push(`no COPY of the bundle ${bundle}`);
    if (!/^nonroot:x:65532:65532:/m.test(readFileSync(at('etc/passwd'), 'utf8'))) problems.push('/etc/passwd has no nonroot 65532');
    const home = statSync(at('home/nonroot'));
    if (home.uid !== 65532 || (home.mode & 0o777) !== 0o700) problems.push(`/home/nonroot is ${home.uid} ${(home.mode & 0o777).toString(8)}, want 65532 0700`);
    for (const p of spec.copies) {
      const s = statSync(join(rootfs, p.dest));
      if (s.uid !== 0 || (s.mode & 0o022) !== 0) problems.push(`${p.dest} is ${s.uid} ${(s.mode & 0o777).toString(8)}: the runtime user must not write it`);
    }
    const cacheRoot = at((spec.env.find(([k]) => k === 'NODE_COMPILE_CACHE')?.[1] ?? '/home/nonroot/.cache/node-compile-cache').slice(1));
    const caches = existsSync(cacheRoot) ? readdirSync(cacheRoot) : [];
    const want = new RegExp(`^${built.node.version.replace(/\./g, '\\.')}-${process.arch}-[0-9a-f]+-65532$`);
    if (!caches.some((d) => want.test(d))) problems.push(`no code cache for node ${built.node.version} and uid 65532 under NODE_COMPILE_CACHE (found ${caches.join(', ') || 'none'})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return problems;
}

/** What one run of the image gave. */
export interface ImageRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Whether runc's own error (not the container's) made a run fail: runc prints `runc run failed`,
 * or `… level=error msg=…`, when it cannot create the container (namespaces, cgroups, mounts).
 */
export function runtimeFailure(stderr: string): string | undefined {
  const line = stderr.split('\n').find((l) => /runc run failed|level=error msg=|container_linux\.go|nsenter|cgroups in hybrid mode/.test(l));
  return line?.trim();
}

/** A runc bundle of the image, unpacked once; {@link runImage} writes its config.json per run. */
export interface UnpackedImage {
  dir: string;
  /** The config.json umoci wrote (the image's configuration as a runtime spec). */
  spec: Record<string, unknown> & { process: { args: string[]; env: string[]; terminal?: boolean }; root: { path: string; readonly?: boolean }; mounts: unknown[]; linux: { namespaces: { type: string }[] }; hostname?: string };
}

/** Unpacks the image into a runc bundle. @throws when umoci fails. */
export function unpackImage(tools: ImageTools, layout: string, tag: string, dir: string): UnpackedImage {
  rmSync(dir, { recursive: true, force: true });
  must(tools.umoci, ['unpack', '--image', `${layout}:${tag}`, dir]);
  return { dir, spec: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as UnpackedImage['spec'] };
}

/**
 * Runs the image with runc as a Pod would: the image's user and entrypoint with `args` appended, a
 * read-only root file system, the host's network namespace (a local API server on 127.0.0.1), and
 * `mounts` (`{source, destination}`, read-only binds).
 * @param opts.entrypoint replaces the image's (as a Pod's `command` does).
 * @param opts.whileRunning called once the container started; the run is stopped (SIGTERM) when it
 *   settles. Without it the run lasts until the process exits (or `timeoutMs`).
 * @returns exit code and output.
 * @throws {ImageStepSkipped} when runc itself cannot create the container here (its error quoted).
 */
export async function runImage(
  tools: ImageTools,
  unpacked: UnpackedImage,
  args: string[],
  opts: { env?: string[]; mounts?: { source: string; destination: string }[]; timeoutMs?: number; whileRunning?: () => Promise<void>; entrypoint?: string[] } = {},
): Promise<ImageRun> {
  const spec = structuredClone(unpacked.spec);
  spec.process.args = [...(opts.entrypoint ?? spec.process.args), ...args];
  spec.process.env = [...spec.process.env, ...(opts.env ?? [])];
  spec.process.terminal = false;
  spec.root.readonly = true;
  spec.hostname = 'node-lifecycle-controller';
  spec.linux.namespaces = spec.linux.namespaces.filter((n) => n.type !== 'network');
  for (const m of opts.mounts ?? []) spec.mounts.push({ destination: m.destination, type: 'bind', source: m.source, options: ['rbind', 'ro'] });
  writeFileSync(join(unpacked.dir, 'config.json'), JSON.stringify(spec, null, 1));
  const id = `nlc-image-${process.pid}-${Date.now().toString(36)}`;
  const child = spawn(tools.runc, ['run', '--bundle', unpacked.dir, id], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const timer = setTimeout(() => void sh(tools.runc, ['kill', id, 'KILL']), opts.timeoutMs ?? 120_000);
  try {
    if (opts.whileRunning) {
      const done = await Promise.race([exited.then(() => 'exited' as const), opts.whileRunning().then(() => 'checked' as const)]);
      if (done === 'checked') sh(tools.runc, ['kill', id, 'TERM']);
    }
    const code = await exited;
    const failure = code !== 0 ? runtimeFailure(stderr) : undefined;
    if (failure) throw new ImageStepSkipped(`runc cannot run a container here: ${failure}`);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
    sh(tools.runc, ['delete', '--force', id]);
  }
}

/**
 * An OCI layout as one tar archive: sorted, owner 0, mtimes from `epoch`, no compression (the
 * layers are compressed already). `skopeo copy oci-archive:FILE`, `podman load` and Docker ≥ 25's
 * `docker load` read it.
 */
export function archiveLayout(layout: string, file: string, epoch: string): void {
  must('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', `--mtime=@${epoch}`, '-C', layout, '-cf', file, '.']);
}

/** What {@link signImage} left. */
export interface SignedImage {
  /** The archive: the image, its signature and its SBOM attestation in one OCI layout. */
  archive: string;
  /** The public key of the run's key pair. */
  publicKey: string;
  /** What was verified, in words. */
  verified: string[];
}

/**
 * Signs the image and attests its SBOM with a key pair generated for this run, through a registry
 * served by crane on 127.0.0.1 (cosign signs registry images only), verifies both there, saves
 * image, signature and attestation as one OCI layout (`cosign save`; the image's index entry also
 * carries its tag, so image tools can load the archive), archives it, and verifies the archive
 * offline (`cosign verify --local-image`).
 * @param sbom the image SBOM (CycloneDX JSON) to attest.
 * @throws {Error} when a tool fails or a verification does not pass.
 */
export async function signImage(tools: ImageTools, built: BuiltImage, opts: { work: string; sbom: string; archive: string; publicKey: string; epoch: string }): Promise<SignedImage> {
  const keys = join(opts.work, 'keys');
  rmSync(keys, { recursive: true, force: true });
  mkdirSync(keys, { mode: 0o700 });
  // No passphrase: the key lives for this run only.
  const cosignEnv = { COSIGN_PASSWORD: '', COSIGN_YES: 'true' };
  must(tools.cosign, ['generate-key-pair'], { cwd: keys, env: cosignEnv });
  const registry = spawn(tools.crane, ['registry', 'serve', '--address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const onData = (b: Buffer): void => {
        out += b.toString();
        const m = /serving on port (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      };
      registry.stdout.on('data', onData);
      registry.stderr.on('data', onData);
      registry.once('exit', (code) => reject(new Error(`crane registry serve exited ${code}: ${out}`)));
      setTimeout(() => reject(new Error(`crane registry serve did not start: ${out}`)), 30_000);
    });
    const repo = `127.0.0.1:${port}/node-lifecycle-controller`;
    must(tools.crane, ['push', built.layout, `${repo}:${built.tag}`]);
    const ref = `${repo}@${built.digest}`;
    const key = join(keys, 'cosign.key');
    const pub = join(keys, 'cosign.pub');
    // No transparency log: it is a public service, and this key is for this run only.
    must(tools.cosign, ['sign', '--key', key, '--tlog-upload=false', ref], { env: cosignEnv });
    must(tools.cosign, ['attest', '--key', key, '--type', 'cyclonedx', '--predicate', opts.sbom, '--tlog-upload=false', ref], { env: cosignEnv });
    const verified: string[] = [];
    must(tools.cosign, ['verify', '--key', pub, '--insecure-ignore-tlog=true', ref]);
    verified.push(`cosign verify ${ref}`);
    must(tools.cosign, ['verify-attestation', '--key', pub, '--type', 'cyclonedx', '--insecure-ignore-tlog=true', ref]);
    verified.push('cosign verify-attestation --type cyclonedx');
    const saved = join(opts.work, 'signed-layout');
    rmSync(saved, { recursive: true, force: true });
    must(tools.cosign, ['save', '--dir', saved, ref]);
    tagSavedImage(saved, built);
    archiveLayout(saved, opts.archive, opts.epoch);
    copyFileSync(pub, opts.publicKey);
    verified.push(...verifyArchive(tools, opts.archive, opts.publicKey, opts.work));
    return { archive: opts.archive, publicKey: opts.publicKey, verified };
  } finally {
    registry.kill('SIGTERM');
  }
}

/** Adds the image's tag to its entry in a `cosign save` layout's index (an index annotation: no digest changes). */
function tagSavedImage(saved: string, built: BuiltImage): void {
  const path = join(saved, 'index.json');
  const index = JSON.parse(readFileSync(path, 'utf8')) as { manifests: { digest: string; annotations?: Record<string, string> }[] };
  const entry = index.manifests.find((m) => m.digest === built.digest);
  if (!entry) throw new Error('cosign save wrote no entry for the image');
  entry.annotations = { ...entry.annotations, 'org.opencontainers.image.ref.name': built.tag, 'io.containerd.image.name': `ghcr.io/node-lifecycle-controller/node-lifecycle-controller:${built.tag}` };
  writeFileSync(path, JSON.stringify(index, null, 3));
}

/**
 * Verifies an archive {@link signImage} wrote, offline, as a user would: unpack it, then `cosign
 * verify --local-image` and `cosign verify-attestation --local-image` with the public key.
 * @returns what was verified. @throws {Error} when a verification fails.
 */
export function verifyArchive(tools: ImageTools, archive: string, publicKey: string, work: string): string[] {
  const dir = mkdtempSync(join(work, 'verify-'));
  try {
    must('tar', ['-xf', archive, '-C', dir]);
    must(tools.cosign, ['verify', '--key', publicKey, '--insecure-ignore-tlog=true', '--local-image', dir]);
    must(tools.cosign, ['verify-attestation', '--key', publicKey, '--type', 'cyclonedx', '--insecure-ignore-tlog=true', '--local-image', dir]);
    return [`cosign verify --local-image (the archive)`, 'cosign verify-attestation --local-image (the archive)'];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A free TCP port on 127.0.0.1 (the kernel's pick, released again). */
export async function freeLocalPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

/** GET over HTTP(S) to 127.0.0.1 (the secure port's certificate is self-signed), the body as text; undefined when it does not answer. */
async function localGet(url: string): Promise<{ status: number; body: string } | undefined> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 3000 }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** What {@link runChecks} found. */
export interface RunChecks {
  problems: string[];
  notes: string[];
}

/**
 * Runs the image twice with runc and checks what it answers:
 * 1. `--version`: `opts.versionLine` (the stamped line of the bundle the image holds: src/buildinfo.ts
 *    `stampedVersionLine`), and (NODE_DEBUG_NATIVE=COMPILE_CACHE) node's word that it
 *    accepted the code cache the build's RUN wrote, on the read-only root file system as 65532;
 * 2. `run` against the API server of `kubeconfig` (mounted read-only; a self-contained kubeconfig,
 *    as scripts/control-plane.sh writes), in `--dry-run` with a `--node-selector` that matches no
 *    node and no election, so it writes nothing to a cluster other tests share: `/healthz` on the
 *    secure port (HTTPS) and on the plain port answer `ok`, `/readyz` answers `ok` once its caches
 *    synced from that API server, and SIGTERM ends it with exit code 0.
 * @throws {ImageStepSkipped} when runc cannot run a container here.
 */
export async function runChecks(tools: ImageTools, unpacked: UnpackedImage, opts: { versionLine: string; kubeconfig: string; work: string }): Promise<RunChecks> {
  const problems: string[] = [];
  const notes: string[] = [];
  const t0 = Date.now();
  const v = await runImage(tools, unpacked, ['--version'], { env: ['NODE_DEBUG_NATIVE=COMPILE_CACHE'], timeoutMs: 60_000 });
  if (v.code !== 0 || v.stdout !== `${opts.versionLine}\n`) problems.push(`--version in the image printed ${JSON.stringify(v.stdout)} (exit ${v.code}), want ${JSON.stringify(`${opts.versionLine}\n`)}: ${v.stderr.slice(-500)}`);
  if (!/V8 code cache for ESM file:\/\/\/\S+ was accepted/.test(v.stderr)) problems.push(`node did not accept the image's code cache: ${v.stderr.slice(-500)}`);
  notes.push(`--version: ${v.stdout.trim()}, code cache accepted, ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const kcDir = mkdtempSync(join(opts.work, 'kubeconfig-'));
  const kc = join(kcDir, 'kubeconfig');
  copyFileSync(opts.kubeconfig, kc);
  chmodSync(kc, 0o644); // the container's user (65532) reads it
  const [securePort, plainPort] = [await freeLocalPort(), await freeLocalPort()];
  const seen: Record<string, string> = {};
  const t1 = Date.now();
  try {
    const r = await runImage(
      tools,
      unpacked,
      ['run', '--kubeconfig=/etc/node-lifecycle-controller/kubeconfig', '--leader-elect=false', '--dry-run', '--node-selector=node-lifecycle-controller.test/image-run=none', `--secure-port=${securePort}`, `--metrics-bind-address=127.0.0.1:${plainPort}`, '--log-format=text'],
      {
        mounts: [{ source: kc, destination: '/etc/node-lifecycle-controller/kubeconfig' }],
        timeoutMs: 120_000,
        whileRunning: async () => {
          const deadline = Date.now() + 90_000;
          while (Date.now() < deadline) {
            const [h, ready, plain] = await Promise.all([localGet(`https://127.0.0.1:${securePort}/healthz`), localGet(`https://127.0.0.1:${securePort}/readyz`), localGet(`http://127.0.0.1:${plainPort}/healthz`)]);
            if (h) seen['https /healthz'] = `${h.status} ${h.body.trim()}`;
            if (ready) seen['https /readyz'] = `${ready.status} ${ready.body.trim()}`;
            if (plain) seen['http /healthz'] = `${plain.status} ${plain.body.trim()}`;
            if (h?.body.trim() === 'ok' && ready?.body.trim() === 'ok' && plain?.body.trim() === 'ok') return;
            await new Promise((res) => setTimeout(res, 250));
          }
        },
      },
    );
    for (const k of ['https /healthz', 'https /readyz', 'http /healthz']) if (seen[k] !== '200 ok') problems.push(`${k} answered ${seen[k] ?? 'nothing'} (want 200 ok); the container's output: ${r.stderr.slice(-800)}`);
    if (r.code !== 0) problems.push(`run exited ${r.code} on SIGTERM, want 0: ${r.stderr.slice(-500)}`);
    if (!/caches synced/.test(r.stdout + r.stderr)) problems.push('run never logged "caches synced"');
    notes.push(`run: /healthz and /readyz ok on the secure port ${securePort} and /healthz on 127.0.0.1:${plainPort}, against ${/server: (\S+)/.exec(readFileSync(opts.kubeconfig, 'utf8'))?.[1] ?? '?'}, exit ${r.code} on SIGTERM, ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  } finally {
    rmSync(kcDir, { recursive: true, force: true });
  }
  return { problems, notes };
}
