import { SqsJobsError, toError } from '../core/errors.js';
import { type AnyEvent, type EventPayload, isEventDefinition } from '../core/event.js';
import type { TopicPort } from '../ports/topics.js';
import { type PublishOptions, type PublishResult, prepareEvent, SNS_MAX_MESSAGE_BYTES, type Topics } from './publish.js';

/**
 * A producer's events: checked and sized, then published to their topics through a port made on
 * first publish (a producer that never publishes never loads the SNS client).
 */
export class EventPublisher {
  readonly #settings: Topics;
  readonly #makePort: () => Promise<{ port: TopicPort; close: () => void }>;
  #port: Promise<{ port: TopicPort; close: () => void }> | undefined;

  constructor(
    topics: { settings: Omit<Topics, 'maxMessageBytes'>; port: () => Promise<{ port: TopicPort; close: () => void }> },
    maxMessageBytes: number,
  ) {
    this.#settings = { ...topics.settings, maxMessageBytes: Math.min(maxMessageBytes, SNS_MAX_MESSAGE_BYTES) };
    this.#makePort = topics.port;
  }

  async publish<E extends AnyEvent>(event: E, payload: EventPayload<E>, options: PublishOptions): Promise<PublishResult> {
    if (!isEventDefinition(event)) throw new SqsJobsError('OPTIONS_INVALID', 'publish() takes an event made by defineEvent()');
    const prepared = prepareEvent(event, payload, options, this.#settings);
    this.#port ??= this.#makePort();
    const { port } = await this.#port;
    try {
      const { messageId } = await port.publish(prepared.topicArn, prepared);
      return { eventId: prepared.eventId, messageId };
    } catch (error) {
      const e = toError(error);
      throw new SqsJobsError(
        'PUBLISH_FAILED',
        `could not publish event "${event.name}" (${prepared.eventId}) to ${prepared.topicArn}: ${e.name}: ${e.message}`,
        { cause: error },
      );
    }
  }

  close(): void {
    void this.#port?.then(({ close }) => close());
  }
}
