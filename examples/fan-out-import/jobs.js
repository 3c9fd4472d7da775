// @ts-check
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineJob, fanOutResultSchema, UnrecoverableError } from 'sqs-jobs';
import { z } from 'zod';

/** Where imported users land: one file per user, standing in for a database. */
const OUT_DIR = process.env.OUT_DIR ?? 'imported';

const user = z.object({ email: z.email(), name: z.string().min(1) });

/** One row: its own message, its own retries. A row that can never import fails at once (no retry). */
export const importRow = defineJob({
  name: 'import-row',
  args: z.object({ file: z.string(), row: z.number().int().min(1), line: z.string() }),
  handle: async ({ row, line }) => {
    const [email, name] = line.split(',');
    const parsed = user.safeParse({ email, name });
    if (!parsed.success) throw new UnrecoverableError(`row ${row}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    await mkdir(OUT_DIR, { recursive: true });
    await writeFile(join(OUT_DIR, `${parsed.data.email}.json`), JSON.stringify(parsed.data));
  },
});

/** Runs once, when every row has ended: the children's counts, and the file it was about. */
export const importDone = defineJob({
  name: 'import-done',
  args: fanOutResultSchema.extend({ file: z.string() }),
  handle: async ({ file, total, succeeded, failed }, ctx) => {
    ctx.log.info({ file, total, succeeded, failed }, 'import finished');
    return { file, total, succeeded, failed };
  },
});

/** The file: read once, one child per data row, and the completion job to run after the last. */
export const importFile = defineJob({
  name: 'import-file',
  args: z.object({ file: z.string().min(1) }),
  track: true, // its record shows the children's progress, then the completion
  handle: async ({ file }, ctx) => {
    const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l.trim() !== '');
    const rows = lines.slice(1).map((line, i) => ({ file, row: i + 1, line })); // past the header
    return ctx.fanOut(importRow, rows, { onComplete: { job: importDone, args: { file } } });
  },
});
