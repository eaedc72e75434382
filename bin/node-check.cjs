'use strict';
/*
 * The Node.js version check every entry point of this project runs first (issue 56): on a Node.js
 * older than package.json's `engines` (>=22.19.0) the program would not even parse (Node 20 printed
 * the plugin bundle's 75 KB of minified source with a SyntaxError), so this file is written to parse
 * on any Node.js from 0.10 on: CommonJS, `var` and ES5 only (no arrow functions, template strings,
 * let/const, optional chaining). On an old Node it prints one line naming the required version and
 * exits 2, the project's code for invalid input. test/unit/launcher.test.ts runs it under Debian's
 * Node and under Node 14 and 16, and checks that REQUIRED_NODE is package.json's engines.
 *
 *   require('./node-check.cjs').requireNode('kubectl-node_lifecycle')   from a launcher
 *   node bin/node-check.cjs PROGRAM                                     from a shell script: exit 0 or 2
 *
 * Used by bin/node-lifecycle-controller.cjs (npm's `bin`), bin/plugin-launcher.cjs (the krew
 * archive's launcher, bundled with this file by `npm run build:plugin`) and the checkout's
 * bin/kubectl-node_lifecycle shell script.
 */

/** The oldest Node.js the program runs on: package.json's engines.node, `>=` this. */
var REQUIRED_NODE = '22.19.0';

/** [major, minor, patch] of a version string such as `20.20.2` or `v14.21.3`, or null. */
function parseVersion(text) {
  var m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(text));
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/** True when `have` (a version string) is at least `want`. An unreadable version counts as too old. */
function atLeast(have, want) {
  var h = parseVersion(have);
  var w = parseVersion(want);
  if (h === null || w === null) return false;
  for (var i = 0; i < 3; i++) {
    if (h[i] !== w[i]) return h[i] > w[i];
  }
  return true;
}

/**
 * Exits 2 with one line on stderr when this Node.js is older than REQUIRED_NODE; returns otherwise.
 * @param program the name to start the line with, as the program's other messages do.
 */
function requireNode(program) {
  if (atLeast(process.versions.node, REQUIRED_NODE)) return;
  process.stderr.write(
    program + ': needs Node.js ' + REQUIRED_NODE + ' or later; this is Node.js ' + process.version +
      ' (' + process.execPath + '): install a newer Node.js or put it first on PATH\n'
  );
  process.exit(2);
}

module.exports = { REQUIRED_NODE: REQUIRED_NODE, atLeast: atLeast, requireNode: requireNode };

if (require.main === module) requireNode(process.argv[2] || 'node-lifecycle-controller');
