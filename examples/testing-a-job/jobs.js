// @ts-check
import { z } from 'zod';
import { defineJob, UnrecoverableError } from 'sqs-jobs';

/** One row of an import: refuses a row that can never succeed, reports its progress. */
export const importRow = defineJob({
  name: 'import-row',
  args: z.object({ file: z.string().min(1), row: z.number().int().nonnegative() }),
  handle: ({ file, row }, ctx) => {
    if (file.endsWith('.xls')) throw new UnrecoverableError(`${file}: only CSV is supported`);
    ctx.progress(1, 1);
    return { file, row, attempt: ctx.attempt };
  },
});

/** An import: one child per row, and a completion job once they have all ended. */
export const importFile = defineJob({
  name: 'import-file',
  args: z.object({ file: z.string().min(1), rows: z.number().int().positive() }),
  handle: ({ file, rows }, ctx) =>
    ctx.fanOut(
      importRow,
      Array.from({ length: rows }, (_, row) => ({ file, row })),
    ),
});
