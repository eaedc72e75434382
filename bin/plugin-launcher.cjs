'use strict';
/*
 * The kubectl plugin's launcher in the krew archive: `npm run build:plugin` bundles this file with
 * bin/node-check.cjs into dist/plugin/kubectl-node_lifecycle.cjs (one CommonJS file that parses on
 * any Node.js from 14 on; `.cjs`, so no package.json around it can make it an ES module), beside the
 * plugin's bundle dist/plugin/kubectl-node_lifecycle.mjs, which it loads once the Node.js version is
 * new enough. krew's `bin` (krew/node-lifecycle.yaml): krew links it as kubectl-node_lifecycle, and
 * Node resolves the link, so the bundle is found beside the real file.
 */
require('./node-check.cjs').requireNode('kubectl-node_lifecycle');
import('./kubectl-node_lifecycle.mjs').catch(function (err) {
  process.stderr.write('kubectl-node_lifecycle: cannot load kubectl-node_lifecycle.mjs beside this launcher: ' + (err && err.message) + '\n');
  process.exit(1);
});
