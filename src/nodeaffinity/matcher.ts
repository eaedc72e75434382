/**
 * Node selector matching exactly as the scheduler matches: a port of
 * `k8s.io/component-helpers/scheduling/corev1/nodeaffinity` (v0.37.2, `nodeaffinity.go`) plus the
 * parts of `k8s.io/apimachinery/pkg/labels` (`NewRequirement`, `Requirement.Matches`) and
 * `pkg/fields` (`OneTermEqualSelector` / `OneTermNotEqualSelector`) that it relies on.
 *
 * Semantics (all from upstream, tested in test/unit/nodeaffinity-matcher.test.ts with upstream's
 * case names):
 * - terms are ORed; within a term, `matchExpressions` and `matchFields` are all ANDed;
 * - a term with neither expressions nor fields (an empty term, or a JSON `null` term, which Go
 *   unmarshals to the zero term) is skipped, so it matches **nothing**; a selector whose terms are
 *   all empty, or that has no terms, matches no node. (The 2015 design document says "an empty
 *   node selector term matches all objects"; current API documentation and code say the opposite,
 *   and we follow the code: docs/node-affinity.md.)
 * - `Gt` / `Lt` take exactly one value that parses as a base-10 int64; the node's label value must
 *   parse too, or the expression does not match;
 * - `matchFields` supports `In` / `NotIn` with exactly one value, on the node's fields (only
 *   `metadata.name` exists); a field selector is ignored for a node with no name (upstream's
 *   `len(nodeFields) > 0` test).
 * - A term that fails to parse never matches; with the lazy selector, the other terms still count
 *   (`LazyErrorNodeSelector.Match`), with the strict one (`NewNodeSelector`) any error is returned.
 */

/** `v1.NodeSelectorOperator`. */
export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

/** `v1.NodeSelectorRequirement` (JSON shape). */
export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: readonly string[];
}

/** `v1.NodeSelectorTerm` (JSON shape). */
export interface NodeSelectorTerm {
  matchExpressions?: readonly NodeSelectorRequirement[];
  matchFields?: readonly NodeSelectorRequirement[];
}

/** `v1.NodeSelector` (JSON shape). A `null` term is allowed, as JSON allows it. */
export interface NodeSelector {
  nodeSelectorTerms?: readonly (NodeSelectorTerm | null)[] | null;
}

/** What a selector is matched against: a node's name and labels. */
export interface MatchableNode {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** A parse error with the path of the offending field (`field.Error`, flattened to text). */
export interface SelectorError {
  /** e.g. `nodeSelectorTerms[0].matchFields[0].values` */
  field: string;
  /** e.g. `must have one element` */
  detail: string;
}

/** The valid label-selector operators, in upstream's order (`validSelectorOperators`). */
export const VALID_SELECTOR_OPERATORS: readonly NodeSelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
/** The valid field-selector operators (`validFieldSelectorOperators`). */
export const VALID_FIELD_SELECTOR_OPERATORS: readonly NodeSelectorOperator[] = ['In', 'NotIn'];

type LabelRequirement =
  | { key: string; op: 'In' | 'NotIn'; values: ReadonlySet<string> }
  | { key: string; op: 'Exists' | 'DoesNotExist' }
  | { key: string; op: 'Gt' | 'Lt'; value: bigint };

type FieldRequirement = { key: string; op: 'In' | 'NotIn'; value: string };

/** A parsed term; `errors` non-empty means it never matches. */
interface ParsedTerm {
  labels: readonly LabelRequirement[] | undefined;
  fields: readonly FieldRequirement[] | undefined;
  errors: readonly SelectorError[];
}

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Go `strconv.ParseInt(s, 10, 64)`: optional sign, decimal digits, within int64.
 * @returns the value, or undefined when `s` is not such an integer.
 */
export function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

/**
 * apimachinery `validation.IsQualifiedName` (label keys): an optional DNS-1123 subdomain prefix of
 * at most 253 characters and `/`, then a name of 1–63 characters.
 * @returns the problems, empty when valid.
 */
export function qualifiedNameErrors(key: string): string[] {
  const parts = key.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0] ?? '';
  else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) return ['prefix part must be non-empty'];
    if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return ['prefix part must be a lowercase RFC 1123 subdomain'];
  } else {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/'"];
  }
  if (name.length === 0) return ['name part must be non-empty'];
  if (name.length > 63) return ['name part must be no more than 63 characters'];
  if (!QUALIFIED_NAME_PART.test(name)) {
    return [
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ];
  }
  return [];
}

/**
 * Port of `labels.NewRequirement` for one node selector expression (with the operator mapping of
 * `nodeSelectorRequirementsAsSelector`).
 */
function labelRequirement(expr: NodeSelectorRequirement, path: string): LabelRequirement | SelectorError {
  const values = expr.values ?? [];
  if (!(VALID_SELECTOR_OPERATORS as readonly string[]).includes(expr.operator)) {
    return { field: `${path}.operator`, detail: `Unsupported value: "${expr.operator}": supported values: ${VALID_SELECTOR_OPERATORS.map((o) => `"${o}"`).join(', ')}` };
  }
  const keyErr = qualifiedNameErrors(expr.key)[0];
  if (keyErr !== undefined) return { field: `${path}.key`, detail: keyErr };
  const op = expr.operator as NodeSelectorOperator;
  switch (op) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) return { field: `${path}.values`, detail: 'for \'in\', \'notin\' operators, values set can\'t be empty' };
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) return { field: `${path}.values`, detail: 'values set must be empty for exists and does not exist' };
      return { key: expr.key, op };
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1) return { field: `${path}.values`, detail: "for 'Gt', 'Lt' operators, exactly one value is required" };
      const v = parseInt64(values[0] ?? '');
      if (v === undefined) return { field: `${path}.values[0]`, detail: "for 'Gt', 'Lt' operators, the value must be an integer" };
      return { key: expr.key, op, value: v };
    }
  }
  for (const [i, v] of values.entries()) {
    if (v.length > 63 || !LABEL_VALUE.test(v)) return { field: `${path}.values[${i}]`, detail: 'a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character' };
  }
  return { key: expr.key, op, values: new Set(values) };
}

function isError(x: object): x is SelectorError {
  return 'detail' in x;
}

/** `labels.Requirement.Matches`. */
function labelMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  switch (r.op) {
    case 'In':
      return has && value !== undefined && r.values.has(value);
    case 'NotIn':
      return !has || value === undefined || !r.values.has(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || value === undefined) return false;
      const lv = parseInt64(value);
      if (lv === undefined) return false;
      return r.op === 'Gt' ? lv > r.value : lv < r.value;
    }
  }
}

/** `newNodeSelectorTerm` (a non-empty term). */
function parseTerm(term: NodeSelectorTerm, path: string): ParsedTerm {
  const errors: SelectorError[] = [];
  let labels: LabelRequirement[] | undefined;
  let fields: FieldRequirement[] | undefined;
  const exprs = term.matchExpressions ?? [];
  if (exprs.length > 0) {
    const parsed = exprs.map((e, i) => labelRequirement(e, `${path}.matchExpressions[${i}]`));
    const errs = parsed.filter(isError);
    if (errs.length > 0) errors.push(...errs);
    else labels = parsed.filter((p): p is LabelRequirement => !isError(p));
  }
  const fieldExprs = term.matchFields ?? [];
  if (fieldExprs.length > 0) {
    const out: FieldRequirement[] = [];
    const errs: SelectorError[] = [];
    for (const [i, e] of fieldExprs.entries()) {
      const p = `${path}.matchFields[${i}]`;
      if (e.operator !== 'In' && e.operator !== 'NotIn') {
        errs.push({ field: `${p}.operator`, detail: `Unsupported value: "${e.operator}": supported values: "In", "NotIn"` });
      } else if ((e.values ?? []).length !== 1) {
        errs.push({ field: `${p}.values`, detail: 'must have one element' });
      } else {
        out.push({ key: e.key, op: e.operator, value: e.values?.[0] ?? '' });
      }
    }
    if (errs.length > 0) errors.push(...errs);
    else fields = out;
  }
  return { labels, fields, errors };
}

/** `isEmptyNodeSelectorTerm`; a `null` term is the zero term, hence empty. */
function isEmptyTerm(term: NodeSelectorTerm | null): boolean {
  return term === null || ((term.matchExpressions ?? []).length === 0 && (term.matchFields ?? []).length === 0);
}

/** `nodeSelectorTerm.match`. */
function termMatches(t: ParsedTerm, node: MatchableNode): boolean {
  if (t.labels && !t.labels.every((r) => labelMatches(r, node.labels))) return false;
  // extractNodeFields only sets metadata.name when the node has a name; a field absent from the
  // set reads as "" (fields.Set.Get), as in upstream.
  if (t.fields && node.name.length > 0) {
    const get = (k: string): string => (k === 'metadata.name' ? node.name : '');
    if (!t.fields.every((f) => (f.op === 'In' ? get(f.key) === f.value : get(f.key) !== f.value))) return false;
  }
  return true;
}

/**
 * A parsed node selector that tolerates bad terms: upstream `LazyErrorNodeSelector`.
 */
export class LazyErrorNodeSelector {
  readonly #terms: readonly ParsedTerm[];

  /**
   * `NewLazyErrorNodeSelector`: skips empty (and null) terms, parses the rest, keeps their errors.
   * @param ns the selector (JSON shape). Never throws.
   */
  constructor(ns: NodeSelector) {
    this.#terms = (ns.nodeSelectorTerms ?? []).flatMap((t, i) => (isEmptyTerm(t) || t === null ? [] : [parseTerm(t, `nodeSelectorTerms[${i}]`)]));
  }

  /** The parse errors of every non-empty term, in term order. */
  errors(): SelectorError[] {
    return this.#terms.flatMap((t) => t.errors);
  }

  /** How many non-empty terms the selector has (0: it matches no node). */
  get termCount(): number {
    return this.#terms.length;
  }

  /**
   * `LazyErrorNodeSelector.Match`: true as soon as one valid term matches; a term with errors is
   * skipped (its errors are returned when nothing matched).
   * @param node the node, or undefined (upstream's nil node: no match).
   */
  match(node: MatchableNode | undefined): { match: boolean; errors: SelectorError[] } {
    if (node === undefined) return { match: false, errors: [] };
    const errors: SelectorError[] = [];
    for (const t of this.#terms) {
      if (t.errors.length > 0) {
        errors.push(...t.errors);
        continue;
      }
      if (termMatches(t, node)) return { match: true, errors: [] };
    }
    return { match: false, errors };
  }
}

/** Thrown by {@link newNodeSelector} with every parse error. */
export class NodeSelectorParseError extends Error {
  readonly errors: readonly SelectorError[];
  constructor(errors: readonly SelectorError[]) {
    super(errors.map((e) => `${e.field}: ${e.detail}`).join('; '));
    this.name = 'NodeSelectorParseError';
    this.errors = errors;
  }
}

/**
 * `NewNodeSelector`: the strict form, which refuses a selector with any bad term.
 * @returns the lazy selector (all of whose terms are valid).
 * @throws {NodeSelectorParseError} listing every parse error.
 */
export function newNodeSelector(ns: NodeSelector): LazyErrorNodeSelector {
  const lazy = new LazyErrorNodeSelector(ns);
  const errors = lazy.errors();
  if (errors.length > 0) throw new NodeSelectorParseError(errors);
  return lazy;
}

/**
 * `RequiredNodeAffinity` (`GetRequiredNodeAffinity` / `NewRequiredNodeAffinity`): `spec.nodeSelector`
 * (all labels equal) AND `requiredDuringSchedulingIgnoredDuringExecution` (lazy).
 * @param nodeSelector `spec.nodeSelector`, or undefined.
 * @param required the pod's required node selector, or undefined (no constraint).
 * @returns a matcher; `match` returns the lazy selector's errors too.
 */
export function requiredNodeAffinity(
  nodeSelector: Readonly<Record<string, string>> | undefined,
  required: NodeSelector | undefined,
): (node: MatchableNode) => { match: boolean; errors: SelectorError[] } {
  const lazy = required ? new LazyErrorNodeSelector(required) : undefined;
  const set = nodeSelector && Object.keys(nodeSelector).length > 0 ? Object.entries(nodeSelector) : undefined;
  return (node) => {
    if (set && !set.every(([k, v]) => Object.hasOwn(node.labels, k) && node.labels[k] === v)) return { match: false, errors: [] };
    return lazy ? lazy.match(node) : { match: true, errors: [] };
  };
}
