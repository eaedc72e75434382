#!/usr/bin/env node
// The kubectl plugin's entry point, and the esbuild bundle's (npm run build:plugin). Logic: plugin.ts.
import { runPlugin } from './plugin.js';

// Exit explicitly, as main.ts does: nothing may keep the process alive after the command returned.
process.exit(await runPlugin(process.argv.slice(2)));
