/**
 * The drain meter: how many messages the workers have taken off each queue (deleted once done),
 * counted where every producer can read it. A producer's admission derives the queue's drain rate
 * from two reads some seconds apart, so the count itself may start anywhere and may reset (an
 * evicted counter restarts): a reader takes a count lower than the last as a restart.
 */
export interface DrainMeter {
  /** Add `count` messages deleted from `queueUrl`. Never rejects: a lost add makes the rate read low for a moment. */
  add(queueUrl: string, count: number): Promise<void>;
  /** The count so far; undefined when there is none yet (no worker has added to it) or it cannot be read. */
  read(queueUrl: string): Promise<number | undefined>;
}
