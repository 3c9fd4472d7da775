/** The one job of the fairness benchmark: producers and workers agree on its name and arguments. */
import { z } from 'zod';

export const JOB_NAME = 'fairness-bench';
/** `seq`: the job's number within its run (for reading the effects log by eye). */
export const jobArgs = z.object({ seq: z.number().int() });
/** How long each handler works. */
export const HANDLER_MS = 20;
