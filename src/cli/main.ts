#!/usr/bin/env node
// The `bin` entry: run the program and exit with its code. Logic lives in program.ts (testable).
import { main } from './program.js';

process.exitCode = await main(process.argv.slice(2));
