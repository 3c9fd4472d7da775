import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineJob, fanOutResultSchema, UnrecoverableError } from '../src/index.js';

/** One row of an import: a few milliseconds of work; a malformed row can never succeed, so it goes to the DLQ. */
export const importRow = defineJob({
  name: 'import-row',
  args: z.object({ file: z.string().min(1), row: z.number().int().min(0) }),
  async handle({ file, row }, ctx) {
    await sleep(5 + (row % 20), undefined, { signal: ctx.signal });
    if (row % 97 === 13) throw new UnrecoverableError(`${file} row ${row} is malformed`);
  },
});

/** Runs once, when every row of a file has ended, with how many succeeded and failed. */
export const importDone = defineJob({
  name: 'import-done',
  args: fanOutResultSchema.extend({ file: z.string() }),
  handle({ file, total, succeeded, failed }, ctx) {
    ctx.log.info({ file, total, succeeded, failed }, 'import finished');
    return { file, succeeded, failed };
  },
});

/** Splits a file into one import-row job per row; import-done follows once they have all ended. Tracked: `sqs-jobs job <id>` shows its progress. */
export const importFile = defineJob({
  name: 'import-file',
  args: z.object({ file: z.string().min(1), rows: z.number().int().min(0).max(1_000_000) }),
  track: true,
  handle({ file, rows }, ctx) {
    const argsList = Array.from({ length: rows }, (_, row) => ({ file, row }));
    return ctx.fanOut(importRow, argsList, { onComplete: { job: importDone, args: { file } } });
  },
});
