import { pino, type Logger } from 'pino';
import type { Env } from './env.js';

/** JSON logs to stdout; level from SQS_JOBS_LOG_LEVEL (default info). */
export function createLogger(env: Env = process.env, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level: env.SQS_JOBS_LOG_LEVEL ?? 'info', base: { name: 'sqs-jobs', ...bindings } });
}
