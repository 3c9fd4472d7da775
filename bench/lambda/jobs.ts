/**
 * The work both handlers run, written once so that neither side's figure holds work the other's
 * does not: `noop` (the success path) and `fails` (the failure path: it throws). sqs-jobs runs them
 * as jobs (sqs-jobs-side.ts: defineJob, the envelope read, the args checked by their schema);
 * Powertools' record handler does what a user's would to get the same job out of a record: parse
 * the body, check the args by the same schema, call the same function (powertools-side.ts). Only
 * zod here, so that Powertools' bundle (cold.ts) holds nothing of sqs-jobs.
 */
import { z } from 'zod';

export const args = z.object({ n: z.number().int() });
export type Args = z.output<typeof args>;

/** The no-op job: nothing to do, so what is measured is the handler around it. */
export const noopWork = (_args: Args): void => {};

/** The failing job: every run throws, so each record goes the failure path. */
export const failWork = (args: Args): void => {
  throw new Error(`job ${args.n} fails, as the bench asks`);
};

/** By job name, for Powertools' record handler (the envelope names the job). */
export const WORK: Readonly<Record<string, (a: Args) => void>> = { noop: noopWork, fails: failWork };

/**
 * The fake credentials every client of the bench signs with, both sides' and the bench's own:
 * DynamoDB Local keeps a database per access key (no -sharedDb), so a table is seen only by
 * clients that sign with the key it was made with.
 */
export const CREDENTIALS = { accessKeyId: 'x', secretAccessKey: 'x' };
