/**
 * The flag table of `node-lifecycle-controller [run]`: names, kinds, defaults and help text.
 * src/cli/flags.ts parses and validates the flags this table names.
 *
 * Checked against k8s.io/kubernetes v1.37.2: `cmd/kube-controller-manager/app/options/*.go` (flags
 * and defaults) and `pkg/controller/nodelifecycle/config/v1alpha1/defaults.go`.
 */
import { LOG_FORMATS, LOG_LEVELS } from '../log/logger.js';
import { KNOWN_CONTROLLERS } from '../controllers/names.js';


/** How a flag's value is read. */
export type FlagKind = 'duration' | 'number' | 'integer' | 'boolean' | 'string' | 'list';

/** One row of {@link FLAGS}. */
export interface FlagSpec {
  /** Flag name without dashes. */
  readonly name: string;
  readonly kind: FlagKind;
  /** Default, written as on the command line. */
  readonly default: string;
  /** Unit shown in `--help`. */
  readonly unit: string;
  readonly help: string;
}

/** Our default for `--metrics-bind-address`: empty, the plain-HTTP port is off (as kube-controller-manager has none since 1.24). */
export const DEFAULT_METRICS_BIND_ADDRESS = '';

/**
 * How every `--dry-run` process's Lease name ends, and no acting process's may: a shadow never
 * campaigns for the Lease of a controller that acts (flags.ts refuses either mix, exit 2).
 */
export const SHADOW_LEASE_SUFFIX = '-shadow';

/** The leader-election Lease name with `--dry-run` when `--leader-elect-resource-name` is not given. */
export const SHADOW_LEASE_NAME = `node-lifecycle-controller${SHADOW_LEASE_SUFFIX}`;

/** Our default for `--secure-port`; see the flag's help for why not kube-controller-manager's 10257. */
export const DEFAULT_SECURE_PORT = 10267;

const DURATION_UNIT = 'Go duration, e.g. 500ms, 40s, 1m30s';

/**
 * Every flag we accept, with kube-controller-manager's names and defaults (our extensions say so in
 * their help), in `--help` order.
 */
export const FLAGS = [
  {
    name: 'kubeconfig',
    kind: 'string',
    default: '',
    unit: 'file path',
    help: 'Path to a kubeconfig file. Empty: in-cluster config when KUBERNETES_SERVICE_HOST is set, else $KUBECONFIG or ~/.kube/config.',
  },
  {
    name: 'config',
    kind: 'string',
    default: '',
    unit: 'file path',
    help: 'A YAML or JSON file whose keys are flag names (e.g. "node-monitor-grace-period: 50s"). Command-line flags and NLC_* variables override it.',
  },
  {
    name: 'controllers',
    kind: 'list',
    default: '*',
    unit: 'comma-separated list',
    help:
      "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'; the first entry naming a controller wins. " +
      `All controllers: ${KNOWN_CONTROLLERS.map((c) => (c.aliases.length ? `${c.name} (${c.aliases.join(', ')})` : c.name)).join(', ')}.`,
  },
  {
    name: 'node-monitor-period',
    kind: 'duration',
    default: '5s',
    unit: DURATION_UNIT,
    help: 'The period for syncing NodeStatus in the node lifecycle controller (how often node health is checked).',
  },
  {
    name: 'node-monitor-grace-period',
    kind: 'duration',
    default: '50s',
    unit: DURATION_UNIT,
    help:
      'How long a running node may be unresponsive before it is marked unhealthy (Ready=Unknown). Must be at least --node-monitor-period, and several times the kubelet heartbeat interval. ' +
      'Upstream default 50s since 1.32 (40s before): it should exceed HTTP2_PING_TIMEOUT_SECONDS (30s) + HTTP2_READ_IDLE_TIMEOUT_SECONDS (15s).',
  },
  {
    name: 'node-startup-grace-period',
    kind: 'duration',
    default: '1m',
    unit: DURATION_UNIT,
    help: 'How long a starting node (one that never posted a Ready condition) may be unresponsive before it is marked unhealthy.',
  },
  {
    name: 'node-eviction-rate',
    kind: 'number',
    default: '0.1',
    unit: 'nodes per second',
    help: 'Rate at which nodes are NoExecute-tainted (and so their pods evicted) after a node failure, per zone, while the zone is healthy.',
  },
  {
    name: 'secondary-node-eviction-rate',
    kind: 'number',
    default: '0.01',
    unit: 'nodes per second',
    help: 'Tainting rate while a zone is unhealthy (PartialDisruption). Implicitly 0 for zones of at most --large-cluster-size-threshold nodes.',
  },
  {
    name: 'large-cluster-size-threshold',
    kind: 'integer',
    default: '50',
    unit: 'nodes',
    help: 'Zone size above which --secondary-node-eviction-rate applies; smaller unhealthy zones stop tainting.',
  },
  {
    name: 'unhealthy-zone-threshold',
    kind: 'number',
    default: '0.55',
    unit: 'fraction in (0, 1]',
    help: 'Fraction of not-Ready nodes (and at least 3) at which a zone is treated as unhealthy (PartialDisruption).',
  },
  {
    name: 'enable-taint-manager',
    kind: 'boolean',
    default: 'true',
    unit: 'true or false',
    help: 'Evict pods through NoExecute taints and tolerations. false selects the legacy (Kubernetes 1.20 --enable-taint-manager=false) direct-eviction mode, which deletes all pods of a failed node after --pod-eviction-timeout. Removed upstream in 1.27 (kubernetes #115840); kept here.',
  },
  {
    name: 'pod-eviction-timeout',
    kind: 'duration',
    default: '5m',
    unit: DURATION_UNIT,
    help: 'Legacy mode only (--enable-taint-manager=false): grace period before the pods of a failed node are deleted. Removed upstream in 1.27 (kubernetes #115840); kept here.',
  },
  {
    name: 'max-unhealthy-nodes',
    kind: 'string',
    default: '',
    unit: 'nodes, or a percentage like 20%',
    help:
      'Cluster-wide circuit breaker: while more nodes than this are not Ready (counted over every node that takes part in zone disruption; percentages round down), no NoExecute taint is added anywhere and legacy eviction stops. ' +
      'It closes once at most limit − max(1, 10% of limit) nodes have been not Ready for --node-monitor-grace-period. Our own (docs/node-lifecycle.md). Empty: off.',
  },
  {
    name: 'storm-threshold',
    kind: 'string',
    default: '',
    unit: 'nodes, or a percentage like 10%',
    help:
      'Storm detection: when more nodes than this became not Ready within --storm-window, cluster-wide, no NoExecute taint is added anywhere and legacy eviction stops, until the storm has been over for --storm-hold. Our own (docs/node-lifecycle.md). Empty: off.',
  },
  {
    name: 'storm-window',
    kind: 'duration',
    default: '1m',
    unit: DURATION_UNIT,
    help: 'Storm detection: the window within which --storm-threshold nodes becoming not Ready make a storm. Must be greater than 0. Our own.',
  },
  {
    name: 'storm-hold',
    kind: 'duration',
    default: '5m',
    unit: DURATION_UNIT,
    help: 'Storm detection: how long NoExecute tainting stays paused after a storm is over. Our own.',
  },
  {
    name: 'kube-api-qps',
    kind: 'number',
    default: '20',
    unit: 'requests per second',
    help: 'QPS to use while talking with the Kubernetes API server: each controller\'s writes have their own budget, as in kube-controller-manager.',
  },
  {
    name: 'kube-api-burst',
    kind: 'integer',
    default: '30',
    unit: 'requests',
    help: 'Burst to use while talking with the Kubernetes API server (per controller, as --kube-api-qps).',
  },
  {
    name: 'kube-api-content-type',
    kind: 'string',
    default: 'application/vnd.kubernetes.protobuf',
    unit: 'application/vnd.kubernetes.protobuf or application/json',
    help:
      'Content type the Pod, Node and Lease informers ask the API server for, as kube-controller-manager\'s flag of this name (whose default is protobuf too). ' +
      'application/json forces JSON; with protobuf a server that refuses it, or an answer that does not decode, falls back to JSON (node_lifecycle_controller_informer_wire_fallback_total). Writes are JSON either way.',
  },
  {
    name: 'leader-elect',
    kind: 'boolean',
    default: 'true',
    unit: 'true or false',
    help: 'Acquire a coordination.k8s.io Lease before running the controllers, so that only one replica is active.',
  },
  {
    name: 'leader-elect-lease-duration',
    kind: 'duration',
    default: '15s',
    unit: DURATION_UNIT,
    help: 'How long non-leaders wait after the last renewal before they may take the lease. Must exceed --leader-elect-renew-deadline.',
  },
  {
    name: 'leader-elect-renew-deadline',
    kind: 'duration',
    default: '10s',
    unit: DURATION_UNIT,
    help: 'How long the leader keeps retrying to renew before it stops leading. Must exceed 1.2 × --leader-elect-retry-period.',
  },
  {
    name: 'leader-elect-retry-period',
    kind: 'duration',
    default: '2s',
    unit: DURATION_UNIT,
    help: 'How long clients wait between attempts to acquire or renew the lease.',
  },
  {
    name: 'leader-elect-resource-name',
    kind: 'string',
    default: 'node-lifecycle-controller',
    unit: 'Lease name',
    help: 'Name of the Lease used for leader election (upstream kube-controller-manager uses "kube-controller-manager").',
  },
  {
    name: 'leader-elect-resource-namespace',
    kind: 'string',
    default: 'kube-system',
    unit: 'namespace',
    help: 'Namespace of the leader-election Lease.',
  },
  {
    name: 'terminated-pod-gc-threshold',
    kind: 'integer',
    default: '12500',
    unit: 'pods (0 or less: off)',
    help: 'pod-garbage-collector-controller: number of terminated pods (Succeeded or Failed) that may exist before the oldest are deleted. As kube-controller-manager; 0 or less disables the pass.',
  },
  {
    name: 'force-detach-timeout',
    kind: 'duration',
    default: '6m',
    unit: DURATION_UNIT,
    help: 'How long a volume may wait for a clean unmount on a not-Ready node before it is force-detached. Our extension: upstream hard-codes 6m (ReconcilerMaxWaitForUnmountDuration).',
  },
  {
    name: 'disable-force-detach-on-timeout',
    kind: 'boolean',
    default: 'false',
    unit: 'true or false',
    help: 'Never force-detach on timeout; only the node.kubernetes.io/out-of-service taint triggers a force detach.',
  },
  {
    name: 'affinity-violation-grace',
    kind: 'duration',
    default: '60s',
    unit: DURATION_UNIT,
    help: 'node-affinity-enforcer: how long a pod\'s during-execution node affinity must have failed to match its node, continuously, before the pod is evicted. Our own.',
  },
  {
    name: 'affinity-eviction-rate',
    kind: 'number',
    default: '0.1',
    unit: 'pods per second',
    help: 'node-affinity-enforcer: evictions per second (token bucket, burst 1); 0 never evicts. Our own.',
  },
  {
    name: 'affinity-max-evictions-per-node',
    kind: 'integer',
    default: '0',
    unit: 'pods (0: no cap)',
    help: 'node-affinity-enforcer: at most this many evictions from one node in any 10 minutes (the descheduler\'s maxNoOfPodsToEvictPerNode). Our own.',
  },
  {
    name: 'affinity-max-evictions-total',
    kind: 'integer',
    default: '0',
    unit: 'pods (0: no cap)',
    help: 'node-affinity-enforcer: at most this many evictions in any 10 minutes (the descheduler\'s maxNoOfPodsToEvictTotal). Our own.',
  },
  {
    name: 'metrics-bind-address',
    kind: 'string',
    default: DEFAULT_METRICS_BIND_ADDRESS,
    unit: 'host:port',
    help:
      'If set, also serve /metrics, /healthz, /livez, /readyz and /debug/state over plain HTTP here, WITHOUT authentication (for the local demo and tests; not upstream). ' +
      'Empty (default): no plain port. host:port; empty host = all interfaces; port 0 = any free port.',
  },
  {
    name: 'secure-port',
    kind: 'integer',
    default: String(DEFAULT_SECURE_PORT),
    unit: 'port, 0-65535',
    help:
      'The port on which to serve HTTPS with authentication and authorization (/metrics, /healthz, /livez, /readyz, /debug/state). If 0, don\'t serve HTTPS at all. ' +
      'The default is ours, not kube-controller-manager\'s 10257, so both can share a host network and scrape configs are not confused.',
  },
  {
    name: 'bind-address',
    kind: 'string',
    default: '0.0.0.0',
    unit: 'IP address',
    help: 'The IP address on which to listen for the --secure-port port. If blank or an unspecified address (0.0.0.0 or ::), all interfaces and IP address families will be used.',
  },
  {
    name: 'tls-cert-file',
    kind: 'string',
    default: '',
    unit: 'file path',
    help: 'File containing the default x509 Certificate for HTTPS (CA cert, if any, concatenated after server cert). Without it and --tls-private-key-file, a self-signed certificate and key are generated in memory at start-up.',
  },
  {
    name: 'tls-private-key-file',
    kind: 'string',
    default: '',
    unit: 'file path',
    help: 'File containing the default x509 private key matching --tls-cert-file.',
  },
  {
    name: 'authentication-kubeconfig',
    kind: 'string',
    default: '',
    unit: 'file path',
    help: "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create tokenreviews.authentication.k8s.io. Empty: the connection of --kubeconfig.",
  },
  {
    name: 'authentication-token-webhook-cache-ttl',
    kind: 'duration',
    default: '10s',
    unit: DURATION_UNIT,
    help: 'The duration to cache responses from the webhook token authenticator (TokenReview); 0 disables the cache.',
  },
  {
    name: 'authorization-kubeconfig',
    kind: 'string',
    default: '',
    unit: 'file path',
    help: "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io. Empty: the connection of --kubeconfig.",
  },
  {
    name: 'authorization-webhook-cache-authorized-ttl',
    kind: 'duration',
    default: '10s',
    unit: DURATION_UNIT,
    help: "The duration to cache 'authorized' responses from the webhook authorizer (SubjectAccessReview); 0 disables.",
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl',
    kind: 'duration',
    default: '10s',
    unit: DURATION_UNIT,
    help: "The duration to cache 'unauthorized' responses from the webhook authorizer (SubjectAccessReview); 0 disables.",
  },
  {
    name: 'authorization-always-allow-paths',
    kind: 'list',
    default: '/healthz,/readyz,/livez',
    unit: 'comma-separated paths; a trailing * matches a prefix',
    help: "A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the 'core' kubernetes server (and, ours, served without a token).",
  },
  {
    name: 'log-level',
    kind: 'string',
    default: 'info',
    unit: `one of ${LOG_LEVELS.join(', ')}`,
    help: 'Minimum level of log lines written.',
  },
  {
    name: 'log-format',
    kind: 'string',
    default: 'json',
    unit: `one of ${LOG_FORMATS.join(', ')}`,
    help: 'json: one JSON object per line; text: human-readable lines.',
  },
  {
    name: 'v',
    kind: 'integer',
    default: '',
    unit: 'klog verbosity, an integer >= 0',
    help:
      "kube-controller-manager's -v/--v, mapped onto --log-level: 0-3 info, 4-5 debug, 6 and above trace (warnings and errors are always written, as with klog). " +
      'It and --log-level set the same thing: on the command line the later one wins; in one NLC_* or --config layer give only one. Empty: --log-level decides.',
  },
  {
    name: 'logging-format',
    kind: 'string',
    default: '',
    unit: `one of ${LOG_FORMATS.join(', ')}`,
    help: "kube-controller-manager's --logging-format (text or json), the same as --log-format; the two follow the precedence rule of --v and --log-level. Empty: --log-format decides.",
  },
  {
    name: 'feature-gates',
    kind: 'list',
    default: '',
    unit: 'comma-separated Name=true|false pairs (kube: prefix allowed); repeats add',
    help:
      "kube-controller-manager 1.37.2's --feature-gates: every gate it knows is accepted (AllAlpha and AllBeta too), and what it refuses is refused, with its message (unknown gates, gates locked to their default, missing dependencies). " +
      'The gates that change something here: ' +
      'TaintTolerationComparisonOperators=true|false (alpha, default false: Lt and Gt tolerations tolerate nothing, so the taint eviction controller deletes a pod they alone covered; true: they compare integer values). ' +
      'NodeControllerLeaseCircuitBreaker=true|false (beta, default true: before acting on a node whose cached Lease expired, the node lifecycle controller reads the Lease live and holds while its Lease cache is behind; false: the cache decides, as 1.36 and earlier). ' +
      "WatchListClient=true|false (client-go's, beta, default true: informers try a watch-list first; false: list then watch; when not named here, KUBE_FEATURE_WatchListClient=false also turns it off). " +
      'PodDisruptionConditions=true|false (ours; 1.37.2 no longer has it. Default true: the taint eviction controller adds the DisruptionTarget pod condition before each deletion, as 1.26+; false: one DELETE per pod, as 1.20–1.25). ' +
      'The other gates change nothing here (docs/upstream-1.37.md).',
  },
  {
    name: 'dry-run',
    kind: 'boolean',
    default: 'false',
    unit: 'true or false',
    help:
      'Shadow mode (ours, not upstream): run every controller but write nothing to the cluster (no status, taint, delete, detach, eviction or Event); ' +
      'record each would-be write in the log, in node_lifecycle_controller_dry_run_decisions_total and under "shadow" in /debug/state, and let later decisions see it as if it had landed. ' +
      `Leader election still runs, under the Lease "${SHADOW_LEASE_NAME}" unless --leader-elect-resource-name is given, which must then end in "${SHADOW_LEASE_SUFFIX}" ` +
      `(and without --dry-run must not), so a shadow never takes the acting controller's Lease. See docs/shadow-mode.md and the shadow-report command.`,
  },
  {
    name: 'node-selector',
    kind: 'string',
    default: '',
    unit: 'label selector',
    help: 'Only manage nodes whose labels match this selector (e.g. "pool=canary"). Our extension for sharded experiments and tests; upstream has none. Empty: all nodes.',
  },
] as const satisfies readonly FlagSpec[];

/** A flag name (without dashes). */
export type FlagName = (typeof FLAGS)[number]['name'];

/** {@link FLAGS} by name. */
export const FLAG_BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]));

/**
 * The environment variable that sets a flag.
 * @param flag flag name without dashes, e.g. `node-monitor-period`.
 * @returns e.g. `NLC_NODE_MONITOR_PERIOD`.
 */
export function flagEnvVar(flag: string): string {
  return `NLC_${flag.toUpperCase().replace(/-/g, '_')}`;
}
