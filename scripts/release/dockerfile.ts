/**
 * The Dockerfile as data: its stages and instructions, and the runtime stage's image configuration
 * (user, working directory, environment, entrypoint, labels, exposed ports, what it copies and runs),
 * with the build arguments substituted. The image built here without a Docker engine
 * (scripts/release/image.ts) takes its configuration from this, so it follows the Dockerfile; the
 * Dockerfile's static checks (test/unit/dockerfile.test.ts) read it through the same parser.
 * Pure functions of text.
 */

/** One instruction: its upper-case keyword, the rest of the line (continuations joined), its first line. */
export interface DockerInstruction {
  op: string;
  args: string;
  line: number;
}

/** One stage: `FROM [--platform=P] IMAGE [AS NAME]` and the instructions under it. */
export interface DockerStage {
  from: string;
  /** `--platform=…` of the FROM line, if any. */
  platform: string | undefined;
  name: string | undefined;
  body: DockerInstruction[];
}

/**
 * Parses a Dockerfile into stages: comments dropped, `\` continuations joined.
 * @throws {Error} naming the line for a line that is no instruction, a FROM it cannot read, or an
 *   instruction before the first FROM.
 */
export function parseDockerfile(text: string): DockerStage[] {
  const instructions: DockerInstruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending !== '' && line.startsWith('#')) return; // comment lines inside a continuation
    if (pending === '') startLine = i + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = pending + line;
    pending = '';
    const m = /^(\S+)\s+(.*)$/.exec(full);
    if (!m) throw new Error(`Dockerfile line ${startLine}: cannot parse "${full}"`);
    instructions.push({ op: (m[1] ?? '').toUpperCase(), args: (m[2] ?? '').trim(), line: startLine });
  });
  const stages: DockerStage[] = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const m = /^(?:--platform=(\S+)\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`Dockerfile line ${ins.line}: FROM ${ins.args}`);
      stages.push({ from: m[2] ?? '', platform: m[1], name: m[3], body: [] });
    } else {
      const current = stages.at(-1);
      if (!current) throw new Error(`Dockerfile line ${ins.line}: ${ins.op} before FROM`);
      current.body.push(ins);
    }
  }
  return stages;
}

/** The instructions of a stage with keyword `op`. */
export const instructionsOf = (s: DockerStage, op: string): DockerInstruction[] => s.body.filter((i) => i.op === op);

/**
 * The JSON-array (exec) form of an instruction's arguments.
 * @throws {Error} when the instruction is missing or its arguments are not a JSON array of strings.
 */
export function execForm(i: DockerInstruction | undefined): string[] {
  if (!i) throw new Error('instruction missing');
  let parsed: unknown;
  try {
    parsed = JSON.parse(i.args);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) throw new Error(`Dockerfile line ${i.line}: ${i.op} is not in exec (JSON array) form`);
  return parsed as string[];
}

/** `KEY="value"` pairs of a stage's LABEL instructions, values as written (no substitution). */
export function labelsOf(stage: DockerStage): Map<string, string> {
  const labels = new Map<string, string>();
  for (const l of instructionsOf(stage, 'LABEL')) {
    for (const m of l.args.matchAll(/([\w.-]+)="([^"]*)"/g)) labels.set(m[1] ?? '', m[2] ?? '');
  }
  return labels;
}

/** What the runtime stage makes of an image (its `docker image inspect` Config, and the file copies and RUNs). */
export interface RuntimeImageSpec {
  /** The FROM image (`name:tag@sha256:…`). */
  base: string;
  /** `USER`, e.g. `65532:65532`. */
  user: string;
  /** `WORKDIR`, absolute. */
  workdir: string;
  /** `ENV`, in order, `${ARG}` substituted. */
  env: [string, string][];
  entrypoint: string[];
  cmd: string[];
  /** `EXPOSE`, e.g. `10267/tcp`. */
  exposedPorts: string[];
  /** `LABEL`, `${ARG}` substituted. */
  labels: Map<string, string>;
  /** `COPY` instructions: source (in the stage named by `from`, or the context) and absolute destination. */
  copies: { from: string | undefined; src: string; dest: string }[];
  /** `RUN` instructions after `USER`, in exec form (the runtime stage has no shell). */
  runs: string[][];
}

/** `${NAME}` and `$NAME` replaced from `vars` (unknown names: empty, as docker does). */
function substitute(s: string, vars: ReadonlyMap<string, string>): string {
  return s.replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a: string | undefined, b: string | undefined) => vars.get(a ?? b ?? '') ?? '');
}

/** `K=V K2="V 2"` pairs. */
function pairs(s: string): [string, string][] {
  return [...s.matchAll(/([\w.-]+)=("([^"]*)"|\S*)/g)].map((m) => [m[1] ?? '', m[3] ?? m[2] ?? '']);
}

/**
 * The runtime (last) stage's image configuration.
 * @param buildArgs `--build-arg` values; the stage's `ARG NAME=default` fills the others.
 * @throws {Error} when the stage lacks USER, WORKDIR or ENTRYPOINT, or an exec-form instruction is not one.
 */
export function runtimeImageSpec(stages: readonly DockerStage[], buildArgs: Readonly<Record<string, string>> = {}): RuntimeImageSpec {
  const stage = stages.at(-1);
  if (!stage) throw new Error('the Dockerfile has no stage');
  const vars = new Map<string, string>();
  for (const a of instructionsOf(stage, 'ARG')) {
    const [name = '', def] = a.args.split('=', 2) as [string, string | undefined];
    vars.set(name, buildArgs[name] ?? def ?? '');
  }
  let workdir = '/';
  let userSeen = false;
  const spec: RuntimeImageSpec = { base: stage.from, user: '', workdir, env: [], entrypoint: [], cmd: [], exposedPorts: [], labels: new Map(), copies: [], runs: [] };
  for (const i of stage.body) {
    switch (i.op) {
      case 'WORKDIR':
        workdir = i.args.startsWith('/') ? i.args : `${workdir.replace(/\/$/, '')}/${i.args}`;
        spec.workdir = workdir;
        break;
      case 'USER':
        spec.user = i.args;
        userSeen = true;
        break;
      case 'ENV':
        for (const [k, v] of pairs(i.args)) {
          const value = substitute(v, vars);
          spec.env.push([k, value]);
          vars.set(k, value);
        }
        break;
      case 'LABEL':
        for (const [k, v] of pairs(i.args)) spec.labels.set(k, substitute(v, vars));
        break;
      case 'EXPOSE':
        for (const p of i.args.split(/\s+/)) spec.exposedPorts.push(p.includes('/') ? p : `${p}/tcp`);
        break;
      case 'ENTRYPOINT':
        spec.entrypoint = execForm(i);
        break;
      case 'CMD':
        spec.cmd = execForm(i);
        break;
      case 'COPY': {
        const m = /^(?:--from=(\S+)\s+)?(\S+)\s+(\S+)$/.exec(i.args);
        if (!m) throw new Error(`Dockerfile line ${i.line}: COPY ${i.args}`);
        const dest = (m[3] ?? '').startsWith('/') ? (m[3] ?? '') : `${workdir.replace(/\/$/, '')}/${(m[3] ?? '').replace(/^\.\//, '')}`;
        spec.copies.push({ from: m[1], src: m[2] ?? '', dest });
        break;
      }
      case 'RUN':
        if (userSeen) spec.runs.push(execForm(i));
        break;
      default:
        break;
    }
  }
  if (!spec.user || spec.entrypoint.length === 0 || spec.workdir === '/') throw new Error('the runtime stage needs USER, WORKDIR and an exec-form ENTRYPOINT');
  return spec;
}
