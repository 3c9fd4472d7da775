import type { DeadLetterReason } from './job-events.js';
import type { MessageAttribute, OutgoingMessage, ReceivedMessage } from './message.js';
import { isFifoQueue } from './queue-url.js';
import { ATTR_JOB, ATTR_JOB_ID } from './envelope.js';
import { ATTR_UNFINISHED_RUNS } from './delivery.js';

const SQS_MAX_ATTRIBUTES = 10;

export const ATTR_DLQ_REASON = 'sqsjobs-dlq-reason';
export const ATTR_DLQ_ERROR = 'sqsjobs-dlq-error';
export const ATTR_DLQ_SOURCE = 'sqsjobs-dlq-source';
export const ATTR_DLQ_RECEIVE_COUNT = 'sqsjobs-dlq-receive-count';
export const ATTR_DLQ_AT = 'sqsjobs-dlq-at';
/**
 * The id of the DLQ replay that sent this message back. Kept when the job is dead-lettered or
 * re-sent again (before any other attribute), so a replay knows the messages it moved already.
 */
export const ATTR_REPLAY = 'sqsjobs-replay';

/**
 * The sender's attributes that fit beside `ours` in SQS's 10, the replay marker first (a replay
 * needs it to stop), then in the order they came.
 */
export function carriedAttributes(
  attributes: Readonly<Record<string, MessageAttribute>>,
  ours: Readonly<Record<string, MessageAttribute>>,
): Record<string, MessageAttribute> {
  const rest = Object.entries(attributes).filter(([name]) => !(name in ours));
  rest.sort(([a], [b]) => Number(b === ATTR_REPLAY) - Number(a === ATTR_REPLAY));
  return Object.fromEntries(rest.slice(0, SQS_MAX_ATTRIBUTES - Object.keys(ours).length));
}

const ERROR_TEXT_LIMIT = 1_000;

/** SQS accepts #x9 #xA #xD and #x20 and above in strings; replace the rest. */
function attributeText(text: string): string {
  const clean = text.replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD]/gu, '?');
  return clean.length > ERROR_TEXT_LIMIT ? `${clean.slice(0, ERROR_TEXT_LIMIT - 1)}…` : clean || '(empty)';
}

/**
 * The message sent to the DLQ: the original body untouched, the original attributes (as many as
 * fit beside ours) and X-Ray trace header, and why it is there: reason code, error text, source
 * queue, receive count, time. `event`: an event's subscriber run, named (job and job id) as the DLQ tools look jobs up, since
 * the body names only the event.
 */
export function deadLetterMessage(
  m: ReceivedMessage,
  reason: DeadLetterReason,
  detail: string,
  now: Date = new Date(),
  event?: { readonly job: string; readonly jobId: string },
): OutgoingMessage {
  const ours: Record<string, MessageAttribute> = {
    ...(event === undefined
      ? {}
      : {
          [ATTR_JOB]: { DataType: 'String', StringValue: event.job },
          [ATTR_JOB_ID]: { DataType: 'String', StringValue: event.jobId },
        }),
    [ATTR_DLQ_REASON]: { DataType: 'String', StringValue: reason },
    [ATTR_DLQ_ERROR]: { DataType: 'String', StringValue: attributeText(detail) },
    [ATTR_DLQ_SOURCE]: { DataType: 'String', StringValue: m.queueUrl },
    [ATTR_DLQ_RECEIVE_COUNT]: { DataType: 'Number', StringValue: String(m.receiveCount) },
    [ATTR_DLQ_AT]: { DataType: 'String', StringValue: now.toISOString() },
  };
  // Its unfinished runs stay behind: a copy moved back by any means (a console redrive too) starts with none.
  const { [ATTR_UNFINISHED_RUNS]: _runs, ...carried } = m.attributes;
  return {
    body: m.body,
    attributes: { ...carriedAttributes(carried, ours), ...ours },
    groupId: m.groupId,
    deduplicationId: isFifoQueue(m.queueUrl) ? `${m.messageId}-${m.receiveCount}` : undefined,
    awsTraceHeader: m.awsTraceHeader,
  };
}
