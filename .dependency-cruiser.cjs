// The project's layering rules, checked by `npm run lint` (depcruise src packages bench).
// Floors, bottom to top: util, log -> kube -> metrics -> the controller folders -> controllers (the
// registry) -> shadow, inmemory, whatif, explain -> cli. A file may import its own floor and the floors
// below it. packages/sim (the simulation workspace) sits beside everything and may import src/; src/
// never imports it. Every rule is an error and says why it exists.

/** The five controller folders: each is one kube-controller-manager controller. */
const CONTROLLERS = ['nodelifecycle', 'tainteviction', 'podgc', 'volumes', 'nodeaffinity'];
const CONTROLLER_DIRS = `^src/(${CONTROLLERS.join('|')})/`;

/**
 * Pure cores: decisions computed from plain objects, with no I/O, no clock of their own and no
 * metrics. They are what the unit tests and what-if drive directly, so they must not pull in the
 * metrics registry (prom-client's global state) or anything that does.
 */
const PURE_CORES = [
  '^src/[^/]+/decision\\.ts$',
  '^src/nodelifecycle/(health|zones|daemonsets|leasecheck|ratelimit|timedqueue)\\.ts$',
  '^src/tainteviction/(tolerations|sight|events)\\.ts$',
  '^src/nodeaffinity/(matcher|rule)\\.ts$',
  '^src/kube/(objects|taints|predicates|types)\\.ts$',
  '^src/util/',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment:
        'An import cycle means neither module can be understood, tested or moved without the other; ' +
        'a layer that holds by itself has none.',
      severity: 'error',
      from: { path: '^(src|packages|bench)/' },
      to: { circular: true },
    },
    {
      name: 'src-not-to-sim',
      comment:
        'src/ is the controller that ships; the kubelet simulator and the demo are a development ' +
        'tool that the build and the production image must not contain, so src/ never imports them: ' +
        'not sim/, not the simulation workspace package (packages/ or its package name).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: ['^sim/', '^packages/', 'node_modules/@?node-lifecycle-controller[/-]sim'] },
    },
    {
      name: 'inmemory-only-for-whatif',
      comment:
        'src/inmemory/ is the in-memory cluster of the what-if and the unit-test worlds: no ' +
        'controller, and nothing that runs against a real API server, may depend on it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(inmemory|whatif)/' },
      to: { path: '^src/inmemory/' },
    },
    {
      name: 'cli-is-the-top',
      comment:
        'src/cli/ is the top floor: it parses flags, fetches, formats and prints. Anything below ' +
        'that imports it inverts the layers (and drags yargs and the flag parser into a pure module).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    ...CONTROLLERS.map((c) => ({
      name: `controller-not-to-controller-${c}`,
      comment:
        `src/${c}/ is one controller: it must not reach into another controller's folder. What ` +
        'controllers share lives below them, in src/kube/ (types, taints, predicates) or src/util/.',
      severity: 'error',
      from: { path: `^src/${c}/` },
      to: { path: CONTROLLER_DIRS, pathNot: `^src/${c}/` },
    })),
    {
      name: 'kube-is-below-controllers',
      comment:
        'src/kube/ is the shared floor (client, informers, events, election, shared types): every ' +
        'controller depends on it, so it can depend on none of them, nor on the registry, shadow ' +
        'mode, what-if or explain above them.',
      severity: 'error',
      from: { path: '^src/kube/' },
      to: { path: [CONTROLLER_DIRS, '^src/(controllers|shadow|whatif|explain)/'] },
    },
    {
      name: 'kube-not-to-metrics',
      comment:
        'src/kube/ does not import src/metrics/: metrics are injected into kube code by whoever ' +
        'builds it, so the kube floor stays usable without the Prometheus registry.',
      severity: 'error',
      from: { path: '^src/kube/' },
      to: { path: '^src/metrics/' },
    },
    {
      name: 'kube-not-to-cli',
      comment: 'src/kube/ is the bottom of the controller; cli is the top.',
      severity: 'error',
      from: { path: '^src/kube/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'pure-cores-no-metrics',
      comment:
        'Pure cores (decision.ts files, health, zones, tolerations, ...) decide from plain objects; ' +
        'they do not import the metrics registry or prom-client: the shell that calls them counts. ' +
        'A type a metric labels by belongs to the decision, and the registry imports it.',
      severity: 'error',
      from: { path: PURE_CORES },
      to: { path: ['^src/metrics/', 'node_modules/prom-client/'] },
    },
    {
      name: 'util-is-the-floor',
      comment:
        'src/util/ (clock, durations, formatting, heap, scheduler, token bucket) is the floor every ' +
        'layer uses, so it imports nothing else from src/.',
      severity: 'error',
      from: { path: '^src/util/' },
      to: { path: '^src/', pathNot: '^src/util/' },
    },
    {
      name: 'tools-are-above-controllers',
      comment:
        'src/whatif/ and src/explain/ drive or read the controllers from above (a simulated run, a ' +
        "report of a controller's state); no controller, nor the floors below them, may depend on " +
        'them, or the tools could not change without touching what ships as the controller.',
      severity: 'error',
      from: { path: [CONTROLLER_DIRS, '^src/(kube|metrics|util|log)/'] },
      to: { path: '^src/(whatif|explain)/' },
    },
    {
      name: 'log-is-a-floor',
      comment: 'src/log/ (the logger) is used by every layer, so it imports nothing from src/ but src/util/.',
      severity: 'error',
      from: { path: '^src/log/' },
      to: { path: '^src/', pathNot: '^src/(log|util)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'An import the checker cannot resolve is one it cannot check: this keeps the rules above ' +
        'honest (and catches a .js specifier with no .ts file behind it).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are dependencies too: a pure core that imports a type from the metrics
    // registry still depends on it.
    tsPreCompilationDeps: true,
    // NodeNext: `./x.js` specifiers resolve to `./x.ts` through the tsconfig.
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
