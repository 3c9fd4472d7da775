import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineJob } from '../src/index.js';

/**
 * A slow job: it takes longer than the visibility timeout the demo uses, so the message stays
 * invisible only because the worker's heartbeat keeps extending it.
 */
export const resizeImage = defineJob({
  name: 'resize-image',
  args: z.object({
    /** A reference to the image (an S3 key), never the image itself. */
    imageKey: z.string().min(1),
    width: z.number().int().positive().max(10_000),
    workMs: z.number().int().min(0).max(600_000).default(3_000),
  }),
  timeoutMs: 120_000,
  async handle(args, ctx) {
    await sleep(args.workMs, undefined, { signal: ctx.signal });
    ctx.log.debug({ imageKey: args.imageKey, width: args.width }, 'image resized');
  },
});
