/**
 * The kubectl plugin `kubectl node-lifecycle status|explain …` (executable `kubectl-node_lifecycle`).
 * esbuild bundles it with its dependencies into one file (`npm run build:plugin` →
 * dist/plugin/kubectl-node_lifecycle.mjs), which krew installs (krew/node-lifecycle.yaml). In a
 * checkout, bin/kubectl-node_lifecycle runs it from source.
 *
 * kubectl passes every word after `kubectl node-lifecycle` to the plugin, its own global flags
 * included, so the plugin reads kubectl's `--context` itself. For shell completion kubectl (1.26+)
 * runs `kubectl_complete-node_lifecycle` with the words typed so far; bin/ has that script, which
 * calls `kubectl-node_lifecycle __complete …`, answered by {@link pluginCompletions} in cobra's format.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { versionLine } from '../version.js';
import { FlagError } from './flags.js';
import { ENDPOINT_YARGS_OPTIONS } from './inspect.js';
import { runCommand } from './command.js';
import { unknownCommandMessage } from './commands.js';

/** The plugin's commands, as `--help` lists them. */
const PLUGIN_COMMANDS = ['status', 'explain', 'shadow-report', 'what-if'] as const;

const PROGRAM = 'kubectl node-lifecycle';

const USAGE = `Usage: kubectl node-lifecycle status [flags]                 the controller's view: leader, zones, next taint, pending deletions, paused zones
       kubectl node-lifecycle explain pod NAMESPACE/NAME     what will happen to a pod, and why
       kubectl node-lifecycle explain node NAME              a node's health, zone, queue position and taints
       kubectl node-lifecycle shadow-report [flags]          a --dry-run shadow's decisions beside kube-controller-manager's actions
       kubectl node-lifecycle what-if --scenario FILE [flags] what the controllers would do in a scenario (reads the cluster only)
       kubectl node-lifecycle --version

Flags: --context NAME picks a kubeconfig context (as kubectl's), --kubeconfig FILE, --namespace/-n NS
and --lease NAME locate the controller's leader-election Lease (default
node-lifecycle-controller/node-lifecycle-controller), --endpoint URL skips the lookup, -o json.
See 'kubectl node-lifecycle status --help'.
`;

/** kubectl's `--context`, taken out of the words: the inspection commands do not know it. */
interface ContextSplit {
  /** The context name, or undefined when not given. */
  context: string | undefined;
  /** The words without `--context NAME` / `--context=NAME`. */
  rest: string[];
}

/**
 * Takes `--context NAME` and `--context=NAME` out of `argv` (before a `--`); the last one wins, as in kubectl.
 * @throws {FlagError} for `--context` without a name.
 */
export function splitContextFlag(argv: readonly string[]): ContextSplit {
  let context: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    if (word === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (word === '--context') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('-')) throw new FlagError('--context: needs a context name', 'context');
      context = next;
      i++;
    } else if (word.startsWith('--context=')) {
      context = word.slice('--context='.length);
      if (context === '') throw new FlagError('--context: needs a context name', 'context');
    } else {
      rest.push(word);
    }
  }
  return { context, rest };
}

let pinnedContext: string | undefined;

/**
 * Makes every kubeconfig this process loads from a file (`--kubeconfig`, `$KUBECONFIG`,
 * `~/.kube/config`) use `context`, as kubectl's `--context` does. The inspection commands load the
 * kubeconfig themselves (src/kube/client.ts `loadKubeConfig`) and take no context, so the plugin,
 * which owns that flag, sets it where client-node loads files: after `loadFromFile` and
 * `loadFromDefault`. In-cluster config has no contexts and is left alone.
 * @param context the context name.
 * @throws later, from the load: `Error('context "X" is not in the kubeconfig')` when it does not exist.
 */
export function pinKubeContext(context: string): void {
  const alreadyPatched = pinnedContext !== undefined;
  pinnedContext = context;
  if (alreadyPatched) return;
  const proto = KubeConfig.prototype;
  for (const method of ['loadFromFile', 'loadFromDefault'] as const) {
    const load = proto[method] as (this: KubeConfig, ...args: unknown[]) => void;
    (proto as unknown as Record<string, unknown>)[method] = function (this: KubeConfig, ...args: unknown[]): void {
      load.apply(this, args);
      const name = pinnedContext;
      if (name === undefined) return;
      if (!this.getContextObject(name)) throw new Error(`context "${name}" is not in the kubeconfig`);
      this.setCurrentContext(name);
    };
  }
}

/**
 * Runs the plugin for `argv` (the words after `kubectl node-lifecycle`).
 * @returns the exit code: 0, 1 (runtime failure), 2 (bad flags or command). Never throws.
 */
export async function runPlugin(argv: string[]): Promise<number> {
  return runCommand(PROGRAM, async () => {
    if (argv[0] === '__complete') {
      process.stdout.write(await pluginCompletions(argv.slice(1)));
      return 0;
    }
    const { context, rest } = splitContextFlag(argv);
    const [command, ...args] = rest;
    switch (command) {
      case 'status':
      case 'explain':
      case 'shadow-report':
      case 'what-if': {
        if (context !== undefined) pinKubeContext(context);
        const run =
          command === 'status'
            ? (await import('./status.js')).runStatusCommand
            : command === 'explain'
              ? (await import('./explain.js')).runExplainCommand
              : command === 'shadow-report'
                ? (await import('./shadow-report.js')).runShadowReportCommand
                : (await import('./what-if.js')).runWhatIfCommand;
        return run(args);
      }
      case '--version':
        process.stdout.write(`${versionLine('kubectl-node_lifecycle')}\n`);
        return 0;
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(USAGE);
        return 0;
      default:
        throw new FlagError(unknownCommandMessage(command, PLUGIN_COMMANDS, 'kubectl node-lifecycle --help'));
    }
  });
}

/** cobra's ShellCompDirectiveNoFileComp: the shell offers no file names. */
const NO_FILE_COMPLETION = 4;

/** Names the completer may look up in the cluster; injectable for tests. */
export interface CompletionLookups {
  contexts: () => string[];
  nodes: () => Promise<string[]>;
  namespaces: () => Promise<string[]>;
  pods: (namespace: string) => Promise<string[]>;
}

/**
 * Completions for `kubectl node-lifecycle <words…>` in cobra's `__complete` format (kubectl's plugin
 * completion calls `kubectl_complete-node_lifecycle`, which calls this): one candidate a line, then
 * `:<directive>`. The last word is the one being completed (may be empty). Cluster lookups
 * (contexts, nodes, namespaces, pods) are best effort: a failure only means fewer candidates.
 * @param words the words after `kubectl node-lifecycle`, the partial one last.
 * @param lookups where names come from; by default the kubeconfig (honouring `--context`) and the API.
 * @returns the completion text, ending in a newline. Never throws.
 * Upstream: cobra's `__complete` protocol (spf13/cobra completions.go), kubectl's plugin completion (KEP-3638-ish, kubectl 1.26).
 */
export async function pluginCompletions(words: string[], lookups?: CompletionLookups): Promise<string> {
  const done = words.slice(0, -1);
  const partial = words.at(-1) ?? '';
  let split: ContextSplit;
  try {
    split = splitContextFlag(done.at(-1) === '--context' ? done.slice(0, -1) : done);
  } catch {
    split = { context: undefined, rest: done };
  }
  const use = lookups ?? apiLookups(split.context, flagValue(done, '--kubeconfig'));
  const previous = done.at(-1);
  const candidates = await completionCandidates(split.rest, previous, partial, use).catch((): string[] => []);
  const shown = candidates.filter((c) => c.startsWith(partial));
  return `${shown.map((c) => `${c}\n`).join('')}:${NO_FILE_COMPLETION}\n`;
}

/**
 * The flags of `status` and `explain` (inspect.ts), plus the plugin's `--context`.
 * @param valuesOnly only the flags that take a value (not the boolean ones such as `--insecure-skip-tls-verify`).
 */
function inspectFlagWords(valuesOnly = false): string[] {
  const words = ['--context'];
  for (const [name, spec] of Object.entries(ENDPOINT_YARGS_OPTIONS)) {
    if (valuesOnly && spec.type === 'boolean') continue;
    words.push(`--${name}`);
    const aliases = 'alias' in spec ? spec.alias : [];
    for (const a of typeof aliases === 'string' ? [aliases] : aliases) words.push(a.length === 1 ? `-${a}` : `--${a}`);
  }
  return words;
}

async function completionCandidates(rest: string[], previous: string | undefined, partial: string, use: CompletionLookups): Promise<string[]> {
  if (previous === '--context') return use.contexts();
  if (previous === '-o' || previous === '--output') return ['table', 'json'];
  if (previous === '--via') return [...ENDPOINT_YARGS_OPTIONS.via.choices];
  if (previous === '-n' || previous === '--namespace' || previous === '--leader-elect-resource-namespace') return use.namespaces();
  if (previous === '--kubeconfig') return [];
  if (partial.startsWith('-')) return inspectFlagWords();
  // Positional words, skipping flags and the values of flags that take one.
  const valueFlags = new Set(inspectFlagWords(true));
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] ?? '';
    if (w.startsWith('-')) {
      if (valueFlags.has(w) && !w.includes('=')) i++;
      continue;
    }
    positional.push(w);
  }
  const [command, kind, target] = positional;
  if (command === undefined) return ['status', 'explain', 'shadow-report', 'what-if'];
  if (command !== 'explain' || target !== undefined) return [];
  if (kind === undefined) return ['pod', 'node'];
  if (kind === 'node') return use.nodes();
  if (kind === 'pod') {
    const slash = partial.indexOf('/');
    if (slash < 0) return (await use.namespaces()).map((ns) => `${ns}/`);
    const namespace = partial.slice(0, slash);
    return (await use.pods(namespace)).map((p) => `${namespace}/${p}`);
  }
  return [];
}

function flagValue(words: readonly string[], flag: string): string | undefined {
  let value: string | undefined;
  words.forEach((w, i) => {
    if (w === flag) value = words[i + 1];
    else if (w.startsWith(`${flag}=`)) value = w.slice(flag.length + 1);
  });
  return value;
}

/** How long a completion may wait for the API server before it gives up on names, in **milliseconds**. */
const COMPLETION_LOOKUP_TIMEOUT_MS = 3_000;

function apiLookups(context: string | undefined, kubeconfig: string | undefined): CompletionLookups {
  const clients = async () => {
    if (context !== undefined) pinKubeContext(context);
    const { loadKubeConfig, makeClients } = await import('../kube/client.js');
    return makeClients(loadKubeConfig(kubeconfig), { readTimeoutMs: COMPLETION_LOOKUP_TIMEOUT_MS });
  };
  const names = (items: readonly { metadata?: { name?: string } }[]): string[] =>
    items.map((i) => i.metadata?.name ?? '').filter((n) => n !== '');
  return {
    contexts: () => {
      const kc = new KubeConfig();
      if (kubeconfig) kc.loadFromFile(kubeconfig);
      else kc.loadFromDefault();
      return kc.getContexts().map((c) => c.name);
    },
    nodes: async () => names((await (await clients()).core.listNode({ limit: 500 })).items),
    namespaces: async () => names((await (await clients()).core.listNamespace({ limit: 500 })).items),
    pods: async (namespace) => names((await (await clients()).core.listNamespacedPod({ namespace, limit: 500 })).items),
  };
}
