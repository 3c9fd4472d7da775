import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineJob } from '../src/index.js';

/** A fast job whose mail provider fails now and then: it shows retries with backoff. */
export const sendWelcomeEmail = defineJob({
  name: 'send-welcome-email',
  args: z.object({
    userId: z.string().min(1),
    /** Chance (0-1) that the fake mail provider fails this attempt; the demo sets it. */
    failureRate: z.number().min(0).max(1).default(0.2),
  }),
  backoff: { baseMs: 1_000, factor: 2, capMs: 8_000 },
  async handle(args, ctx) {
    await sleep(20 + Math.random() * 80, undefined, { signal: ctx.signal });
    if (Math.random() < args.failureRate) {
      throw new Error(`mail provider answered 503 for user ${args.userId}`);
    }
    ctx.log.debug({ userId: args.userId }, 'welcome email sent');
  },
});
