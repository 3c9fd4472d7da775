// @ts-check
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { defineBatchJob } from 'sqs-jobs';
import { z } from 'zod';

/** Where the "search index" lives: one file per tenant, standing in for a bulk-indexing API. */
const INDEX_DIR = process.env.INDEX_DIR ?? 'index';

/**
 * Index documents in bulk: each document is its own message (own job id, retries and DLQ path),
 * but the handler gets up to 100 of one tenant at a time, so the index takes one write per batch.
 */
export const indexDocument = defineBatchJob({
  name: 'index-document',
  args: z.object({ tenant: z.string().min(1), docId: z.string().min(1), title: z.string() }),
  key: (doc) => doc.tenant, // one batch per tenant
  maxSize: 100, // hand over at most 100 at once…
  maxWaitMs: 1_000, // …and keep none waiting more than a second for its batch to fill
  async handle(items, ctx) {
    await mkdir(INDEX_DIR, { recursive: true });
    const lines = items.map(({ args }) => `${JSON.stringify({ docId: args.docId, title: args.title })}\n`).join('');
    await appendFile(join(INDEX_DIR, `${ctx.key}.ndjson`), lines);
    ctx.log.info({ tenant: ctx.key, size: items.length }, 'indexed a batch');
  },
});
