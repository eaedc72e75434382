/**
 * Label selectors as `--node-selector` takes them: the equality- and set-based syntax of
 * `k8s.io/apimachinery/pkg/labels.Parse`, and matching a node's labels against the parsed
 * requirements. Used by the flag validation (src/cli/flags.ts) and by what-if, which narrows the
 * snapshot's nodes as `--node-selector` narrows the node informer.
 */

/** One requirement of a label selector, as `k8s.io/apimachinery/pkg/labels.Parse` reads it. */
export interface LabelRequirement {
  key: string;
  /** `exists` (`key`), `!exists` (`!key`), `=` (also `==`), `!=`, `in`, `notin`, `gt` (`>`), `lt` (`<`). */
  operator: 'exists' | '!exists' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';
  /** Values for `=`/`!=` (one), `in`/`notin` (one or more), `gt`/`lt` (one integer); empty for the exists forms. */
  values: string[];
}

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
/** A DNS-1123 subdomain (`metav1` object names, label key prefixes); also the Lease name check of the flags. */
export const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A DNS-1123 label (namespace names); also the Lease namespace check of the flags. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return LABEL_NAME.test(key);
  return DNS1123_SUBDOMAIN.test(key.slice(0, slash)) && LABEL_NAME.test(key.slice(slash + 1));
}

function isLabelValue(value: string): boolean {
  return value === '' || LABEL_NAME.test(value);
}

/**
 * Parses a label selector string (`role=worker,zone in (a,b),!excluded`).
 * @param text the selector; empty or blank selects everything (returns []).
 * @returns its requirements, in order.
 * @throws {Error} with a one-line reason for malformed selectors, keys or values.
 * Upstream: `labels.Parse` (`staging/src/k8s.io/apimachinery/pkg/labels/selector.go`).
 */
export function parseLabelSelector(text: string): LabelRequirement[] {
  if (text.trim() === '') return [];
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((raw) => parseRequirement(raw.trim()));
}

function parseRequirement(req: string): LabelRequirement {
  const checkKey = (key: string): string => {
    if (!isLabelKey(key)) throw new Error(`invalid label key "${key}"`);
    return key;
  };
  const checkValue = (value: string): string => {
    if (!isLabelValue(value)) throw new Error(`invalid label value "${value}"`);
    return value;
  };
  let m: RegExpExecArray | null;
  if (req === '') throw new Error('empty requirement');
  if ((m = /^!\s*([^\s!=<>(),]+)$/.exec(req))) return { key: checkKey(m[1] ?? ''), operator: '!exists', values: [] };
  if ((m = /^([^\s!=<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(req))) {
    const values = (m[3] ?? '').split(',').map((v) => checkValue(v.trim()));
    return { key: checkKey(m[1] ?? ''), operator: m[2] === 'in' ? 'in' : 'notin', values };
  }
  if ((m = /^([^\s!=<>(),]+)\s*(==|=|!=)\s*([^\s!=<>(),]*)$/.exec(req))) {
    return { key: checkKey(m[1] ?? ''), operator: m[2] === '!=' ? '!=' : '=', values: [checkValue(m[3] ?? '')] };
  }
  if ((m = /^([^\s!=<>(),]+)\s*([<>])\s*(\S+)$/.exec(req))) {
    if (!/^-?\d+$/.test(m[3] ?? '')) throw new Error(`"${m[3]}" must be an integer for ${m[2]}`);
    return { key: checkKey(m[1] ?? ''), operator: m[2] === '>' ? 'gt' : 'lt', values: [m[3] ?? ''] };
  }
  if ((m = /^([^\s!=<>(),]+)$/.exec(req))) return { key: checkKey(m[1] ?? ''), operator: 'exists', values: [] };
  throw new Error(`cannot parse requirement "${req}"`);
}

/**
 * Whether a label set satisfies every requirement (an empty list selects everything).
 * @param requirements from {@link parseLabelSelector}.
 * @param labels the object's labels.
 * @returns true when all requirements hold.
 * Upstream: `labels.Requirement.Matches`.
 */
export function labelSelectorMatches(requirements: readonly LabelRequirement[], labels: Readonly<Record<string, string>>): boolean {
  return requirements.every((r) => {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    switch (r.operator) {
      case 'exists':
        return has;
      case '!exists':
        return !has;
      case '=':
      case 'in':
        return has && r.values.includes(value ?? '');
      case '!=':
      case 'notin':
        return !has || !r.values.includes(value ?? '');
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(value ?? '')) return false;
        const diff = Number(value) - Number(r.values[0]);
        return r.operator === 'gt' ? diff > 0 : diff < 0;
      }
    }
    return false;
  });
}
