import { cancelledWhile, leaseLost, type Outcome } from '../decide/decide.js';
import { abortedWith, type Lease } from '../hold/lease.js';
import type { GoodReading } from '../reading.js';
import type { Held } from './batches.js';

/** Why an item ended without running. */
const WAITED_IN_BATCH = 'it waited in its batch';

/** A batch job's message, claimed and held until its batch is flushed. */
export interface HeldItem extends Held {
  readonly lease: Lease;
  readonly read: GoodReading;
}

/**
 * A held item's fate if it is not to run: its lease was lost, or it was cancelled while it waited
 * (its lock read the cancel mark at a heartbeat). Undefined: it is still to run.
 */
export function endedWhileHeld(item: HeldItem): Outcome | undefined {
  if (item.lease.lost) return leaseLost(WAITED_IN_BATCH);
  if (abortedWith(item.lease, 'CANCELLED')) return cancelledWhile(WAITED_IN_BATCH);
  return undefined;
}
