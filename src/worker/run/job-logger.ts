import type { Logger } from 'pino';
import type { JobInfo } from '../../core/job-events.js';

/**
 * A child logger bound to the job. Callers make it on first use: most jobs log nothing, and a
 * pino child per message would cost memory for as long as the job runs, and CPU.
 */
export function jobLogger(logger: Logger, info: JobInfo): Logger {
  // The tenant is in every job log line, so Logs Insights can rank tenants by wait or failures
  // (a metric dimension per tenant would be unbounded).
  return logger.child({
    jobId: info.jobId,
    job: info.jobName,
    messageId: info.messageId,
    attempt: info.attempt,
    ...(info.tenant === undefined ? {} : { tenant: info.tenant }),
  });
}
