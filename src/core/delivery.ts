import type { ReceivedMessage } from './message.js';

/**
 * Handing a message back by visibility costs one of its receives: SQS counts every receive, and
 * moves a message to the DLQ once the count passes the queue's maxReceiveCount, whether or not it
 * ever ran. A message that has no receive left and must go back without running is re-sent
 * instead: a new message with the same body (same job id) and a fresh receive count, after which
 * the old one is deleted. These attributes carry what the worker needs across the re-send.
 */
/** Receives the job had under earlier messages, so `ctx.attempt` goes on counting. */
export const ATTR_PRIOR_RECEIVES = 'sqsjobs-prior-receives';
/** The first message's SentTimestamp (ms since the epoch), so WaitTime still starts at the first send. */
export const ATTR_FIRST_SENT_AT = 'sqsjobs-first-sent-at';
/**
 * The MessageId of the first message of the chain. The dedupe lock names the message a running job
 * belongs to; a re-sent copy of that message is the same delivery, not a redundant second one.
 */
export const ATTR_ORIGIN = 'sqsjobs-origin-message-id';

/**
 * On a copy of a message that is in the DLQ already, re-sent only because its fan-out count failed
 * on its last receive: the worker counts it and deletes it, and never runs it (the dead-letter
 * marker names the first message id, which the copy does not have).
 */
export const ATTR_DEAD_LETTERED = 'sqsjobs-dead-lettered';

/**
 * On a copy re-sent to wait for its rate limit's turn (its slot too far off to wait for held): the
 * slot it reserved (ms since the epoch), so it starts on that slot when it comes back rather than
 * taking a new one further off.
 */
export const ATTR_RATE_SLOT = 'sqsjobs-rate-slot';

/**
 * Runs of the job that never finished, across re-sends: each time, its message came back while its
 * job id was still held under that message (its worker was killed, or lost the message). Once they
 * reach the queue's maxReceiveCount, the job is dead-lettered with the reason instead of run again.
 * A String: the count, then a space and the token of the last run counted (so a copy that finds
 * that run's claim still held does not count it again).
 */
export const ATTR_UNFINISHED_RUNS = 'sqsjobs-unfinished-runs';

function numberAttribute(m: ReceivedMessage, name: string): number | undefined {
  const text = m.attributes[name]?.StringValue;
  const value = text === undefined ? Number.NaN : Number(text);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The job's attempt: SQS's receive count of this message plus the receives of the messages it was re-sent from. */
export function attemptOf(m: ReceivedMessage): number {
  return m.receiveCount + (numberAttribute(m, ATTR_PRIOR_RECEIVES) ?? 0);
}

/** When the job was first sent (ms since the epoch): the first message's SentTimestamp, carried over re-sends. */
export function firstSentAt(m: ReceivedMessage): number {
  return numberAttribute(m, ATTR_FIRST_SENT_AT) ?? m.sentAt;
}

/** The MessageId the job's lock names: the first message's, carried over re-sends. */
export function originOf(m: ReceivedMessage): string {
  return m.attributes[ATTR_ORIGIN]?.StringValue ?? m.messageId;
}

/** A copy re-sent only to be counted: its job is in the DLQ already (see ATTR_DEAD_LETTERED). */
export function isDeadLetteredCopy(m: ReceivedMessage): boolean {
  return m.attributes[ATTR_DEAD_LETTERED]?.StringValue === 'true';
}

/** The job's runs that never finished, and the token of the last one counted (see ATTR_UNFINISHED_RUNS). */
export interface UnfinishedRuns {
  readonly runs: number;
  readonly last: string | undefined;
}

const NO_UNFINISHED_RUNS: UnfinishedRuns = { runs: 0, last: undefined };

/** What a message says of its job's unfinished runs: none when it carries no (well-formed) count. */
export function unfinishedRunsOf(m: ReceivedMessage): UnfinishedRuns {
  const text = m.attributes[ATTR_UNFINISHED_RUNS]?.StringValue;
  if (text === undefined) return NO_UNFINISHED_RUNS;
  const [count = '', last] = text.split(' ');
  const runs = Number(count);
  return Number.isSafeInteger(runs) && runs > 0 ? { runs, last: last || undefined } : NO_UNFINISHED_RUNS;
}

/** The attribute's value for `u`. */
export const unfinishedRunsText = (u: UnfinishedRuns): string => (u.last === undefined ? String(u.runs) : `${u.runs} ${u.last}`);

/** The rate slot a re-sent copy carries (see ATTR_RATE_SLOT), if any. */
export function carriedRateSlot(m: ReceivedMessage): number | undefined {
  return numberAttribute(m, ATTR_RATE_SLOT);
}
