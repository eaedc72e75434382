#!/usr/bin/env node
// The `bin` entry: run the program and exit with its code. Logic lives in program.ts (testable).
import { main } from './program.js';

// Exit explicitly: once a command has returned, nothing may keep the process alive (for `run`, a
// request still in flight after the bounded shutdown, or a timer of a half-started component).
// pino flushes its buffered lines on 'exit'.
process.exit(await main(process.argv.slice(2)));
