import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

// The project runs on Node 24 from the `node` devDependency (npm puts node_modules/.bin first on
// PATH for scripts). This guards against CI silently running on the machine's older Node.
test('npm scripts run on the Node.js major pinned by the `node` devDependency', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  const pinned = /(\d+)/.exec(pkg.devDependencies['node'] ?? '')?.[1];
  assert.ok(pinned, 'package.json pins node as a devDependency');
  const major = process.versions.node.split('.')[0];
  if (process.env['npm_lifecycle_event']) {
    assert.equal(major, pinned, `running under npm on Node ${process.versions.node}`);
  } else {
    assert.ok(Number(major) >= 22, `the code must run on Node >= 22, got ${process.versions.node}`);
  }
});
