/**
 * Which pods legacy eviction (`--enable-taint-manager=false`) must leave alone because a DaemonSet
 * runs them. Pure; the caches adapt to {@link podSelectedByDaemonSet} through
 * `NodeLifecycleCaches.daemonSets.selectsPod`.
 *
 * Mirrors 1.20's `DaemonSetLister.GetPodDaemonSets` (`pkg/client/listers/apps/v1/daemonset_expansion.go`,
 * as called by `DeletePods` in `pkg/controller/util/node/controller_utils.go`) and
 * `metav1.LabelSelectorAsSelector` (`apimachinery/pkg/apis/meta/v1/helpers.go`).
 */

import type { LabelSelector } from '../kube/objects.js';

export type { LabelSelector, LabelSelectorRequirement } from '../kube/objects.js';

/** What {@link podSelectedByDaemonSet} reads of a DaemonSet: its namespace and `spec.selector`. */
export interface DaemonSetSelector {
  namespace: string;
  selector?: LabelSelector;
}

/**
 * Whether `selector` matches `labels`, or `undefined` when the selector is invalid (an empty key, an
 * unknown operator, `In`/`NotIn` without values, `Exists`/`DoesNotExist` with values).
 * A missing selector and an empty one both return false here: 1.20's `GetPodDaemonSets` treats a
 * nil selector as `labels.Nothing()` and skips an empty one ("should match nothing, not everything").
 */
export function daemonSetSelectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean | undefined {
  if (selector === undefined) return false;
  const matchLabels = Object.entries(selector.matchLabels ?? {});
  const expressions = selector.matchExpressions ?? [];
  if (matchLabels.length === 0 && expressions.length === 0) return false;
  let matches = matchLabels.every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v);
  for (const r of expressions) {
    // labels.NewRequirement rejects an empty key (the slim DaemonSet keeps a malformed entry that way).
    if (r.key === '') return undefined;
    const values = r.values ?? [];
    const has = Object.hasOwn(labels, r.key);
    switch (r.operator) {
      case 'In':
      case 'NotIn': {
        if (values.length === 0) return undefined;
        const inValues = has && values.includes(labels[r.key] ?? '');
        matches &&= r.operator === 'In' ? inValues : !inValues;
        break;
      }
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) return undefined;
        matches &&= r.operator === 'Exists' ? has : !has;
        break;
      default:
        return undefined;
    }
  }
  return matches;
}

/**
 * Whether some DaemonSet in the pod's namespace selects the pod by its labels, whatever the pod's
 * owner references say: 1.20's `GetPodDaemonSets` returning no error. A pod without labels is
 * selected by none; a DaemonSet with a missing, empty or invalid selector selects nothing.
 * @param pod the pod's namespace and labels.
 * @param daemonSets candidate DaemonSets (any namespace; others are ignored).
 * @returns true when at least one DaemonSet selects the pod. Never throws.
 */
export function podSelectedByDaemonSet(
  pod: { namespace: string; labels: Readonly<Record<string, string>> },
  daemonSets: Iterable<DaemonSetSelector>,
): boolean {
  if (Object.keys(pod.labels).length === 0) return false;
  for (const ds of daemonSets) {
    if (ds.namespace !== pod.namespace) continue;
    if (daemonSetSelectorMatches(ds.selector, pod.labels) === true) return true;
  }
  return false;
}
