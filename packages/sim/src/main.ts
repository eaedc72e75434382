#!/usr/bin/env node
// The simulation package's entry point: run the command and exit with its code. Logic lives in
// program.ts (testable). Exit explicitly, as the controller's main.ts does: once the command has
// returned, nothing (a fleet timer, a watch in flight) may keep the process alive.
import { main } from './program.js';

process.exit(await main(process.argv.slice(2)));
