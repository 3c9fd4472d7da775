import type { DeadLetterReason } from './job-events.js';
import type { MessageAttribute, OutgoingMessage, ReceivedMessage } from './ports/queue.js';

export const ATTR_DLQ_REASON = 'sqsjobs-dlq-reason';
export const ATTR_DLQ_ERROR = 'sqsjobs-dlq-error';
export const ATTR_DLQ_SOURCE = 'sqsjobs-dlq-source';
export const ATTR_DLQ_RECEIVE_COUNT = 'sqsjobs-dlq-receive-count';
export const ATTR_DLQ_AT = 'sqsjobs-dlq-at';

const SQS_MAX_ATTRIBUTES = 10;
const ERROR_TEXT_LIMIT = 1_000;

/** SQS accepts #x9 #xA #xD and #x20 and above in strings; replace the rest. */
function attributeText(text: string): string {
  const clean = text.replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD]/gu, '?');
  return clean.length > ERROR_TEXT_LIMIT ? `${clean.slice(0, ERROR_TEXT_LIMIT - 1)}…` : clean || '(empty)';
}

/**
 * The message sent to the DLQ: the original body untouched, the original attributes (as many as
 * fit beside ours), and why it is there: reason code, error text, source queue, receive count, time.
 */
export function deadLetterMessage(m: ReceivedMessage, reason: DeadLetterReason, detail: string, now: Date = new Date()): OutgoingMessage {
  const ours: Record<string, MessageAttribute> = {
    [ATTR_DLQ_REASON]: { DataType: 'String', StringValue: reason },
    [ATTR_DLQ_ERROR]: { DataType: 'String', StringValue: attributeText(detail) },
    [ATTR_DLQ_SOURCE]: { DataType: 'String', StringValue: m.queueUrl },
    [ATTR_DLQ_RECEIVE_COUNT]: { DataType: 'Number', StringValue: String(m.receiveCount) },
    [ATTR_DLQ_AT]: { DataType: 'String', StringValue: now.toISOString() },
  };
  const kept = Object.entries(m.attributes)
    .filter(([name]) => !(name in ours))
    .slice(0, SQS_MAX_ATTRIBUTES - Object.keys(ours).length);
  return {
    body: m.body,
    attributes: { ...Object.fromEntries(kept), ...ours },
    groupId: m.groupId,
    deduplicationId: m.queueUrl.endsWith('.fifo') ? `${m.messageId}-${m.receiveCount}` : undefined,
  };
}
