/**
 * Compatibility re-export: the one `Logger` type and `silentLogger` live in src/log/logger.ts.
 * Kept only for src/kube/workqueue.ts's import (another engineer's file); new code imports from
 * src/log/logger.ts.
 */
export { silentLogger, type Logger } from '../log/logger.js';
