#!/usr/bin/env node
// The package's bin (`npx nlc-sim sim|demo` in the repository): the sources are TypeScript run
// through tsx, as `npm run sim` and `npm run demo` run them; this package is never compiled.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
