import { z } from 'zod';
import { defineJob, UnrecoverableError } from '../src/index.js';

/** Charges an invoice; a cancelled invoice can never be charged, so it goes to the DLQ at once. */
export const chargeInvoice = defineJob({
  name: 'charge-invoice',
  args: z.object({
    invoiceId: z.string().min(1),
    status: z.enum(['open', 'cancelled']).default('open'),
  }),
  async handle(args, ctx) {
    if (args.status === 'cancelled') {
      throw new UnrecoverableError(`invoice ${args.invoiceId} is cancelled and cannot be charged`);
    }
    ctx.log.debug({ invoiceId: args.invoiceId }, 'invoice charged');
  },
});
