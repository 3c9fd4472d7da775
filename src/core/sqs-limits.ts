/* SQS's own limits, written once: every rule and check that depends on one imports it from here. */

/** Entries in one batch call (SendMessageBatch, DeleteMessageBatch, ChangeMessageVisibilityBatch). */
export const SQS_BATCH_LIMIT = 10;

/** The most messages one ReceiveMessage returns. */
export const SQS_RECEIVE_LIMIT = 10;

/** SQS's hard ceiling for one message (and for one batch), in bytes. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** What a queue accepts unless its MaximumMessageSize was raised, and the batch-total ceiling we keep to. */
export const SQS_DEFAULT_MESSAGE_BYTES = 262_144;

/** A visibility timeout is at most 12 hours, and a received message is held at most that long. */
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;

/** The same 12 hours, in milliseconds (handler timeouts, backoff caps, how long a message is held). */
export const SQS_MAX_HOLD_MS = SQS_MAX_VISIBILITY_SECONDS * 1000;

/** A message's delay (DelaySeconds) is at most 15 minutes. */
export const SQS_MAX_DELAY_SECONDS = 900;
