/**
 * Compatibility re-export: the one `Logger` type and `silentLogger` live in src/log/logger.ts.
 * Kept only for importers in files another engineer is editing (src/kube/workqueue.ts,
 * src/cli/run.ts); new code imports from src/log/logger.ts.
 */
export { silentLogger, type Logger } from '../log/logger.js';
