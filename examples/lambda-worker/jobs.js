// @ts-check
import { createHash } from 'node:crypto';
import { defineJob } from 'sqs-jobs';
import { z } from 'zod';

/**
 * Make a thumbnail of an uploaded image. The message carries a reference (the object's key), never
 * the image: the handler fetches what it needs. Here the "work" is a hash, so the example runs
 * anywhere; a real one would read the object from S3 and write the thumbnail back.
 */
export const makeThumbnail = defineJob({
  name: 'thumbnail.make',
  args: z.object({ key: z.string().min(1), width: z.number().int().min(16).max(2048) }),
  track: true,
  handle: async ({ key, width }, ctx) => {
    const digest = createHash('sha256').update(`${key}@${width}`).digest('hex').slice(0, 12);
    ctx.log.info({ key, width, digest }, 'thumbnail made');
    return { thumbnail: `thumbnails/${width}/${digest}.jpg` };
  },
});
