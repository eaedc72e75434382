/**
 * Controller names as `--controllers` takes them, from the registry's descriptors: the canonical
 * names and aliases of kube-controller-manager, which of ours is on, and the `--controllers` value
 * that switches off in kube-controller-manager the loops this program replaces.
 *
 * Upstream: `cmd/kube-controller-manager/names/controller_names.go`, the aliases in `app/core.go`,
 * and `staging/src/k8s.io/controller-manager/app/helper.go` (`IsControllerEnabled`).
 */
import type { ControllerConfig } from './config.js';
import type { ControllerDescriptor } from './context.js';
import { CONTROLLER_REGISTRY } from './table.js';

/** Name, aliases and default of every controller, in start order (the registry's descriptors). */
export const KNOWN_CONTROLLERS: readonly Pick<ControllerDescriptor, 'name' | 'aliases' | 'disabledByDefault' | 'ourOwn'>[] = CONTROLLER_REGISTRY;

/** A canonical controller name. */
export type ControllerName = (typeof CONTROLLER_REGISTRY)[number]['name'];
/** A canonical controller name or one of its aliases. */
export type ControllerNameOrAlias = ControllerName | (typeof CONTROLLER_REGISTRY)[number]['aliases'][number];

/**
 * Resolves a controller name or alias to its canonical name.
 * @param name a name as written in `--controllers` (without a leading `-`).
 * @returns the canonical name, or undefined when no controller has that name or alias.
 * Upstream: the alias step of `GenericControllerManagerConfigurationOptions.ApplyTo` (`controller-manager/options/generic.go`).
 */
export function canonicalControllerName(name: string): ControllerName | undefined {
  const found = CONTROLLER_REGISTRY.find((c) => c.name === name || (c.aliases as readonly string[]).includes(name));
  return found?.name;
}

/**
 * Whether a controller runs, under kube-controller-manager's `--controllers` rules: entries are
 * read in order and the **first** entry that names the controller decides (`name` → on, `-name` →
 * off), so later entries never override an earlier explicit one; with no explicit entry the
 * controller is on exactly when the list holds `*` and it is not disabled by default.
 * Aliases are accepted both in the list and in `name`.
 * @param config the parsed config (only `controllers` is read).
 * @param name canonical controller name or alias.
 * @returns true when the controller should be started.
 * @throws {Error} when `name` is not a known controller (a programming error, not a usage error).
 * Upstream: `IsControllerEnabled` in `staging/src/k8s.io/controller-manager/app/helper.go`
 * (called from `cmd/kube-controller-manager/app/controllermanager.go`).
 */
export function isControllerEnabled(config: Pick<ControllerConfig, 'controllers'>, name: ControllerNameOrAlias | string): boolean {
  const canonical = canonicalControllerName(name);
  const descriptor = CONTROLLER_REGISTRY.find((c) => c.name === canonical);
  if (canonical === undefined || descriptor === undefined) throw new Error(`unknown controller "${name}"`);
  let hasStar = false;
  for (const entry of config.controllers) {
    if (entry === '*') {
      hasStar = true;
      continue;
    }
    const negated = entry.startsWith('-');
    if (canonicalControllerName(negated ? entry.slice(1) : entry) === canonical) return !negated;
  }
  return hasStar && !descriptor.disabledByDefault;
}

/**
 * kube-controller-manager's `--controllers` values that switch off the loops this program replaces,
 * as `--help` prints them and README.md, the chart README and the chart's NOTES.txt must show them:
 * every controller of ours except the attach/detach one (ours only force-detaches; KCM's must keep
 * attaching) and those of our own. Derived from the registry, so the install texts cannot drift from it.
 * @returns `canonical` for Kubernetes 1.29+ (canonical names; taint eviction is its own controller
 *   since 1.29) and `short` for 1.20–1.28 (the short aliases, which every version accepts; there the
 *   taint manager runs inside `nodelifecycle`, and `-taint-eviction-controller` would be an unknown
 *   name that stops kube-controller-manager from starting). Never throws.
 * Upstream: `cmd/kube-controller-manager/names/controller_names.go` and the aliases in `app/core.go`.
 */
export function kubeControllerManagerDisableFlags(): { canonical: string; short: string } {
  const replaced = KNOWN_CONTROLLERS.filter((c) => c.name !== 'persistentvolume-attach-detach-controller' && c.ourOwn !== true);
  const canonical = replaced.map((c) => `-${c.name}`);
  const short = replaced.flatMap((c): string[] => {
    const alias: string | undefined = c.aliases[0];
    return alias === undefined ? [] : [`-${alias}`];
  });
  return { canonical: `--controllers=*,${canonical.join(',')}`, short: `--controllers=*,${short.join(',')}` };
}
