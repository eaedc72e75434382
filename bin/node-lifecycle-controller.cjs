#!/usr/bin/env node
'use strict';
/*
 * npm's `bin` for the controller (package.json): checks the Node.js version first (bin/node-check.cjs;
 * parses on any Node.js), then loads the program as `npm run build` compiled it (dist/src/cli/main.js,
 * ES modules that an old Node.js cannot parse). The image does not use it: it runs the esbuild bundle
 * on its own Node.js 24 (Dockerfile ENTRYPOINT).
 */
require('./node-check.cjs').requireNode('node-lifecycle-controller');
import('../dist/src/cli/main.js').catch(function (err) {
  process.stderr.write('node-lifecycle-controller: cannot load dist/src/cli/main.js (run `npm run build`): ' + (err && err.message) + '\n');
  process.exit(1);
});
