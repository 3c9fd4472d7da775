// @ts-check
import { setTimeout as sleep } from 'node:timers/promises';
import { defineJob } from 'sqs-jobs';
import { z } from 'zod';

/** A slow job with progress: `steps` seconds of work, cancellable between steps. */
export const buildReport = defineJob({
  name: 'build-report',
  priority: 'low',
  args: z.object({ reportId: z.string().min(1), steps: z.number().int().min(1).max(60).default(10) }),
  track: true,
  handle: async ({ reportId, steps }, ctx) => {
    for (let done = 0; done < steps; done++) {
      await sleep(1_000, undefined, { signal: ctx.signal });
      await ctx.progress(done + 1, steps);
    }
    return { reportId, url: `s3://reports/${reportId}.pdf` };
  },
});

/** A quick, urgent job: the high tier starts it ahead of reports. */
export const sendReset = defineJob({
  name: 'send-reset',
  priority: 'high',
  args: z.object({ email: z.email() }),
  track: true,
  handle: async ({ email }, ctx) => {
    ctx.log.info({ email }, 'reset email sent');
    return { sent: true };
  },
});

export const jobs = [buildReport, sendReset];
