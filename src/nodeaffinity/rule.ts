/**
 * The during-execution node affinity rule carried on a pod, and the slim pod the controller keeps.
 *
 * Two annotations (the design document's extension mechanism: "the regular Kubernetes annotation
 * mechanism can be used to add or replace affinity rules"; docs/node-affinity.md):
 * - {@link REQUIRED_DURING_EXECUTION_ANNOTATION}: a `v1.NodeSelector` as JSON, the pod's
 *   `RequiredDuringSchedulingRequiredDuringExecution`;
 * - {@link ENFORCE_REQUIRED_DURING_SCHEDULING_ANNOTATION}: `"true"` enforces the pod's own
 *   `requiredDuringSchedulingIgnoredDuringExecution` during execution too.
 * With both, both must hold. Anything malformed yields `{ kind: 'malformed' }`, which the controller
 * reports and never acts on.
 */
import { toMillis } from '../kube/objects.js';
import { LazyErrorNodeSelector, NodeSelectorParseError, newNodeSelector, type NodeSelector, type NodeSelectorRequirement, type NodeSelectorTerm } from './matcher.js';

/** Annotation holding a `NodeSelector` (JSON): the pod's required-during-execution rule. */
export const REQUIRED_DURING_EXECUTION_ANNOTATION = 'node-lifecycle.io/required-during-execution';
/** Annotation `"true"`: enforce `requiredDuringSchedulingIgnoredDuringExecution` during execution. */
export const ENFORCE_REQUIRED_DURING_SCHEDULING_ANNOTATION = 'node-lifecycle.io/enforce-required-during-scheduling';
/** The kubelet's mirror pod annotation (`kubetypes.ConfigMirrorAnnotationKey`). */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** Where a rule came from. */
export type RuleSource = 'annotation' | 'required-during-scheduling';

/** The rule of one pod. */
export type PodRule =
  | { kind: 'none' }
  | { kind: 'rule'; selectors: readonly { source: RuleSource; selector: LazyErrorNodeSelector }[] }
  | { kind: 'malformed'; reason: string };

/** What the node affinity enforcer keeps of a Pod. Times are epoch **milliseconds**. */
export interface AffinityPod {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** `spec.nodeName`; `""` when unscheduled. */
  nodeName: string;
  phase: string;
  deletionTimestamp?: number;
  /** Controlled by a DaemonSet (controller owner reference of kind DaemonSet). */
  daemonSet: boolean;
  /** A mirror (static) pod: it has the `kubernetes.io/config.mirror` annotation. */
  mirror: boolean;
  rule: PodRule;
}

type Json = Record<string, unknown>;
const isObj = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

function requirements(x: unknown, where: string, fields: boolean): NodeSelectorRequirement[] {
  if (x === undefined || x === null) return [];
  if (!Array.isArray(x)) throw new Error(`${where} must be a list`);
  return x.map((r: unknown, i) => {
    const p = `${where}[${i}]`;
    if (!isObj(r)) throw new Error(`${p} must be an object`);
    const { key, operator, values } = r;
    if (typeof key !== 'string') throw new Error(`${p}.key must be a string`);
    if (typeof operator !== 'string') throw new Error(`${p}.operator must be a string`);
    if (values !== undefined && values !== null && !(Array.isArray(values) && values.every((v) => typeof v === 'string'))) {
      throw new Error(`${p}.values must be a list of strings`);
    }
    // API validation (ValidateNodeFieldSelectorRequirement): only metadata.name is a node field.
    if (fields && key !== 'metadata.name') throw new Error(`${p}.key: Unsupported value: "${key}": supported values: "metadata.name"`);
    return { key, operator, values: (values ?? []) as string[] };
  });
}

/**
 * Parses the JSON of {@link REQUIRED_DURING_EXECUTION_ANNOTATION} strictly: the JSON shape of
 * `v1.NodeSelector`, at least one term (API validation of a required node selector), every term
 * valid (`NewNodeSelector`, not the lazy form: an annotation is not validated by the API server,
 * and half a rule must never evict).
 * @returns the selector.
 * @throws {Error} with a one-line reason when the text is malformed.
 */
export function parseNodeSelectorAnnotation(text: string): LazyErrorNodeSelector {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!isObj(raw)) throw new Error('must be a JSON object with nodeSelectorTerms');
  const terms = raw['nodeSelectorTerms'];
  if (!Array.isArray(terms) || terms.length === 0) throw new Error('nodeSelectorTerms: Required value: must have at least one node selector term');
  const ns: NodeSelector = {
    nodeSelectorTerms: terms.map((t: unknown, i): NodeSelectorTerm | null => {
      if (t === null) return null;
      if (!isObj(t)) throw new Error(`nodeSelectorTerms[${i}] must be an object`);
      return {
        matchExpressions: requirements(t['matchExpressions'], `nodeSelectorTerms[${i}].matchExpressions`, false),
        matchFields: requirements(t['matchFields'], `nodeSelectorTerms[${i}].matchFields`, true),
      };
    }),
  };
  try {
    return newNodeSelector(ns);
  } catch (err) {
    if (err instanceof NodeSelectorParseError) throw new Error(err.message, { cause: err });
    throw err;
  }
}

/**
 * The rule of a pod from its annotations and affinity (raw JSON shapes).
 * @param annotations `metadata.annotations` (may be undefined).
 * @param required `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution` (raw).
 * @returns `none` without the annotations (or with the opt-in set to `"false"`), `malformed` with a
 *   reason, or the selectors to enforce (all must match).
 * Safety: a selector whose terms are all empty matches no node (upstream semantics); enforcing it
 * would evict the pod from every node, so it is reported as malformed instead (acts less).
 */
export function podRule(annotations: Readonly<Record<string, string>> | undefined, required: unknown): PodRule {
  const text = annotations?.[REQUIRED_DURING_EXECUTION_ANNOTATION];
  const optIn = annotations?.[ENFORCE_REQUIRED_DURING_SCHEDULING_ANNOTATION];
  const selectors: { source: RuleSource; selector: LazyErrorNodeSelector }[] = [];
  if (text !== undefined) {
    try {
      selectors.push({ source: 'annotation', selector: parseNodeSelectorAnnotation(text) });
    } catch (err) {
      return { kind: 'malformed', reason: `${REQUIRED_DURING_EXECUTION_ANNOTATION}: ${(err as Error).message}` };
    }
  }
  if (optIn !== undefined) {
    const v = optIn.trim().toLowerCase();
    if (v !== 'true' && v !== 'false') return { kind: 'malformed', reason: `${ENFORCE_REQUIRED_DURING_SCHEDULING_ANNOTATION}: must be "true" or "false", got "${optIn}"` };
    if (v === 'true') {
      if (!isObj(required)) {
        return { kind: 'malformed', reason: `${ENFORCE_REQUIRED_DURING_SCHEDULING_ANNOTATION}: the pod has no requiredDuringSchedulingIgnoredDuringExecution to enforce` };
      }
      // Already validated by the API server; the lazy form is what the scheduler used.
      selectors.push({ source: 'required-during-scheduling', selector: new LazyErrorNodeSelector(required as NodeSelector) });
    }
  }
  if (selectors.length === 0) return { kind: 'none' };
  for (const s of selectors) {
    if (s.selector.termCount === 0) return { kind: 'malformed', reason: `${s.source === 'annotation' ? REQUIRED_DURING_EXECUTION_ANNOTATION : 'requiredDuringSchedulingIgnoredDuringExecution'}: every node selector term is empty, so it matches no node; not enforced` };
  }
  return { kind: 'rule', selectors };
}

/**
 * Converts a wire Pod (JSON) to an {@link AffinityPod}.
 * @returns the slim pod, or undefined (malformed) when namespace, name, uid, resourceVersion or a
 *   readable creationTimestamp is missing: exactly what src/kube/objects.ts `toPod` rejects, so a pod
 *   the rest of the process treats as absent (unreadable) is absent from the enforcer's cache too and
 *   is never evicted because of a version nothing else can read.
 */
export function toAffinityPod(raw: unknown): AffinityPod | undefined {
  if (!isObj(raw)) return undefined;
  const m = raw['metadata'];
  if (!isObj(m)) return undefined;
  const { namespace, name, uid, resourceVersion } = m;
  if (typeof namespace !== 'string' || typeof name !== 'string' || typeof uid !== 'string' || typeof resourceVersion !== 'string') return undefined;
  if (!namespace || !name || !uid || toMillis(m['creationTimestamp']) === undefined) return undefined;
  const spec = isObj(raw['spec']) ? raw['spec'] : {};
  const status = isObj(raw['status']) ? raw['status'] : {};
  const annotations = isObj(m['annotations']) ? (Object.fromEntries(Object.entries(m['annotations']).filter(([, v]) => typeof v === 'string')) as Record<string, string>) : undefined;
  const affinity = isObj(spec['affinity']) ? spec['affinity'] : {};
  const nodeAffinity = isObj(affinity['nodeAffinity']) ? affinity['nodeAffinity'] : {};
  const owners = Array.isArray(m['ownerReferences']) ? (m['ownerReferences'] as unknown[]) : [];
  const pod: AffinityPod = {
    namespace,
    name,
    uid,
    resourceVersion,
    nodeName: typeof spec['nodeName'] === 'string' ? spec['nodeName'] : '',
    phase: typeof status['phase'] === 'string' ? status['phase'] : '',
    daemonSet: owners.some((o) => isObj(o) && o['kind'] === 'DaemonSet' && o['controller'] === true),
    mirror: annotations?.[MIRROR_POD_ANNOTATION] !== undefined,
    rule: podRule(annotations, nodeAffinity['requiredDuringSchedulingIgnoredDuringExecution']),
  };
  const del = m['deletionTimestamp'];
  if (typeof del === 'string' || del instanceof Date) {
    const ms = del instanceof Date ? del.getTime() : Date.parse(del);
    if (!Number.isNaN(ms)) pod.deletionTimestamp = ms;
  }
  return pod;
}
