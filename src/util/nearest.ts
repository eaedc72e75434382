/**
 * "Did you mean …?" for a mistyped flag (issue 56): the known name nearest to what was typed, by
 * Levenshtein distance. yargs' own `recommendCommands` does this for commands only, and pflag (which
 * kube-controller-manager uses) suggests nothing, so this is ours; it only adds to the one-line
 * message of an invalid flag, which still exits 2.
 */

/**
 * Levenshtein edit distance (insertions, deletions, substitutions; each costs 1).
 * @returns the number of edits that turn `a` into `b`. Never throws.
 */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/**
 * The candidate nearest to `typed`, when it is near enough to be a typo: at most one edit for
 * names up to 4 characters, two up to 8, three beyond (a different flag, not a typo, gets no guess).
 * Ties go to the candidate listed first.
 * @param typed what the user wrote, without dashes (`node-monitor-grace-perod`).
 * @param candidates the known names, without dashes.
 * @returns the nearest name, or undefined when none is near enough (or `typed` is one of them).
 */
export function nearestName(typed: string, candidates: Iterable<string>): string | undefined {
  const limit = typed.length <= 4 ? 1 : typed.length <= 8 ? 2 : 3;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    if (c === typed) return undefined;
    const d = editDistance(typed, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * The suffix of an "unknown flag" message.
 * @returns ` (did you mean --x?)` or `` when nothing is near.
 */
export function didYouMean(typed: string, candidates: Iterable<string>): string {
  const near = nearestName(typed, candidates);
  return near === undefined ? '' : ` (did you mean ${near.length === 1 ? '-' : '--'}${near}?)`;
}
