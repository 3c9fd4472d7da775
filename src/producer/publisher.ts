import { PublishBatchError, SqsJobsError, toError, ValidationError } from '../core/errors.js';
import { type AnyEvent, type EventPayload, isEventDefinition } from '../core/event.js';
import type { TopicPort } from '../ports/topics.js';
import type { SendTracing } from '../ports/tracing.js';
import { sendWithRetries } from './batch-retry.js';
import {
  type PublishManyOptions,
  type PublishOptions,
  type PublishResult,
  type PreparedEvent,
  parsePublishOptions,
  prepareEvent,
  publishManyOptionsSchema,
  publishOptionsSchema,
  SNS_MAX_MESSAGE_BYTES,
} from './publish.js';
import { chunkMessages } from './send-many.js';

/** Where events are published: the region and account their topics' ARNs are made from. */
export interface TopicSettings {
  readonly region: string;
  /** undefined: each topic is looked up by name once (the port's findTopic). */
  readonly account: string | undefined;
  /** The option that sets the account, as errors name it (`options.account`, `options.events.account`). */
  readonly accountOption: string;
}

const GROUP_STOPPED = 'not sent: an earlier event of its group was not published (sending it would break the order)';

/** How many PublishBatch calls publishMany keeps in flight. */
const BATCH_CONCURRENCY = 4;

/**
 * Events, checked and sized, then published to their topics through a port made on first publish
 * (a producer that never publishes never loads the SNS client).
 */
export class EventPublisher {
  readonly #settings: TopicSettings;
  readonly #maxMessageBytes: number;
  readonly #makePort: () => Promise<{ port: TopicPort; close: () => void }>;
  #port: Promise<{ port: TopicPort; close: () => void }> | undefined;
  readonly #found = new Map<string, Promise<string>>();

  /** A span per publish call, whose context the events carry (tracing on and @opentelemetry/api installed). */
  readonly #tracing: SendTracing | undefined;

  constructor(
    topics: { settings: TopicSettings; port: () => Promise<{ port: TopicPort; close: () => void }> },
    maxMessageBytes: number,
    tracing: SendTracing | undefined,
  ) {
    this.#settings = topics.settings;
    this.#maxMessageBytes = Math.min(maxMessageBytes, SNS_MAX_MESSAGE_BYTES);
    this.#makePort = topics.port;
    this.#tracing = tracing;
  }

  async publish<E extends AnyEvent>(event: E, payload: EventPayload<E>, options: PublishOptions = {}): Promise<PublishResult> {
    checkEvent(event);
    const opts = parsePublishOptions(publishOptionsSchema, options, event);
    const span = this.#tracing?.publish(event.topic, event.name, undefined, opts.tenant);
    try {
      const prepared = prepareEvent(event, payload, span === undefined ? opts : { ...opts, trace: span.trace }, this.#maxMessageBytes);
      const { port, topicArn } = await this.#target(event);
      const result = { eventId: prepared.eventId, messageId: (await publishOne(port, topicArn, event, prepared)).messageId };
      span?.sent(topicArn, { jobId: result.eventId, messageId: result.messageId });
      return result;
    } catch (error) {
      span?.failed(error);
      throw error;
    }
  }

  /**
   * Publish many payloads of one event with PublishBatch (10 per call and at most 256 KiB, SNS's
   * limits); every payload is checked first, nothing is sent when one is wrong. Entries SNS refuses
   * for its own reasons are sent again; what is still unpublished is one PublishBatchError that
   * names exactly which (by index and event id). A FIFO event's batches go one at a time, in order,
   * without retries, and a group stops at its first entry not published (SNS may still have taken
   * later entries of that group in the same call: the error says which were).
   */
  async publishMany<E extends AnyEvent>(
    event: E,
    payloads: readonly EventPayload<E>[],
    options: PublishManyOptions = {},
  ): Promise<PublishResult[]> {
    checkEvent(event);
    const { ids, groupIds, ...shared } = parsePublishOptions(publishManyOptionsSchema, options, event);
    if (!Array.isArray(payloads))
      throw new ValidationError('ARGS_INVALID', `publishMany("${event.name}")`, [{ field: 'payloads', rule: 'must be an array' }]);
    if (!event.fifo && groupIds !== undefined) {
      throw new ValidationError('OPTIONS_INVALID', `invalid publishMany options for event "${event.name}"`, [
        { field: 'options.groupIds', rule: 'is only for a FIFO event (defineEvent({ fifo: true }))' },
      ]);
    }
    for (const [field, list] of [
      ['ids', ids],
      ['groupIds', groupIds],
    ] as const) {
      if (list !== undefined && list.length !== payloads.length) {
        throw new ValidationError('OPTIONS_INVALID', `invalid publishMany options for event "${event.name}"`, [
          { field: `options.${field}`, rule: `must have one per payload (${payloads.length}), got ${list.length}` },
        ]);
      }
    }
    if (payloads.length === 0) return [];
    const span = this.#tracing?.publish(event.topic, event.name, payloads.length, shared.tenant);
    try {
      const prepared = payloads.map((payload, i) =>
        prepareEvent(
          event,
          payload,
          { ...shared, id: ids?.[i], groupId: groupIds?.[i] ?? shared.groupId, trace: span?.trace },
          this.#maxMessageBytes,
          `payloads[${i}]`,
        ),
      );
      const { port, topicArn } = await this.#target(event);
      const results = await this.#publishBatches(port, topicArn, event, prepared);
      span?.sent(topicArn, undefined);
      return results;
    } catch (error) {
      span?.failed(error, error instanceof PublishBatchError ? error.failed.length : undefined);
      throw error;
    }
  }

  /** publishMany's sending: PublishBatch calls of up to 10 entries and 256 KiB, some in flight at once (FIFO: one at a time, in order). */
  async #publishBatches(port: TopicPort, topicArn: string, event: AnyEvent, prepared: readonly PreparedEvent[]): Promise<PublishResult[]> {
    const chunks = chunkMessages(prepared, SNS_MAX_MESSAGE_BYTES);
    const results: (PublishResult | undefined)[] = new Array(prepared.length);
    const failed: { index: number; eventId: string; code: string; message: string }[] = [];
    // FIFO: one call at a time and no retry (a retried entry would land after later ones), and a
    // group with an entry not published sends none of its later ones.
    const stopped = new Set<string>();
    let next = 0;
    const sendChunks = async () => {
      while (next < chunks.length) {
        let chunk = chunks[next++]!;
        if (event.fifo) {
          for (const i of chunk.filter((i) => stopped.has(prepared[i]!.groupId!)))
            failed.push({ index: i, eventId: prepared[i]!.eventId, code: 'NotSent', message: GROUP_STOPPED });
          chunk = chunk.filter((i) => !stopped.has(prepared[i]!.groupId!));
          if (chunk.length === 0) continue;
        }
        const outcome = await sendWithRetries(
          chunk,
          (indexes) =>
            port.publishBatch(
              topicArn,
              indexes.map((i) => ({ id: String(i), message: prepared[i]! })),
            ),
          event.fifo ? 1 : undefined,
        );
        for (const s of outcome.sent) results[s.index] = { eventId: prepared[s.index]!.eventId, messageId: s.messageId };
        for (const f of outcome.failed) {
          failed.push({ ...f, eventId: prepared[f.index]!.eventId });
          if (event.fifo) stopped.add(prepared[f.index]!.groupId!);
        }
      }
    };
    await Promise.all(Array.from({ length: event.fifo ? 1 : Math.min(BATCH_CONCURRENCY, chunks.length) }, sendChunks));
    if (failed.length > 0) {
      const sent = results.flatMap((r, index) => (r === undefined ? [] : [{ index, ...r }]));
      throw new PublishBatchError(
        event.name,
        failed.sort((a, b) => a.index - b.index),
        sent,
      );
    }
    return results as PublishResult[];
  }

  close(): void {
    this.#port?.then(
      ({ close }) => close(),
      () => {}, // never made: nothing to close (its publish reported why)
    );
  }

  /** The port, and the event's topic: its topicArn, else made from the account, else looked up by name (once). */
  async #target(event: AnyEvent): Promise<{ port: TopicPort; topicArn: string }> {
    if (this.#port === undefined) {
      const made = this.#makePort();
      this.#port = made;
      // A port that could not be made is tried again by the next publish.
      made.catch(() => {
        if (this.#port === made) this.#port = undefined;
      });
    }
    const { port } = await this.#port;
    if (event.topicArn !== undefined) return { port, topicArn: event.topicArn };
    const { region, account } = this.#settings;
    if (account !== undefined) return { port, topicArn: `arn:${partitionOf(region)}:sns:${region}:${account}:${event.topic}` };
    let found = this.#found.get(event.topic);
    if (found === undefined) {
      found = lookUp(port, event, this.#settings.accountOption);
      this.#found.set(event.topic, found);
      found.catch(() => this.#found.delete(event.topic));
    }
    return { port, topicArn: await found };
  }
}

async function lookUp(port: TopicPort, event: AnyEvent, accountOption: string): Promise<string> {
  if (port.findTopic === undefined) {
    throw new ValidationError('OPTIONS_INVALID', `cannot publish event "${event.name}"`, [
      { field: accountOption, rule: 'must be set: the topics port cannot look topics up by name, and the event has no topicArn' },
    ]);
  }
  let arn: string | undefined;
  try {
    arn = await port.findTopic(event.topic);
  } catch (error) {
    const e = toError(error);
    throw new SqsJobsError('PUBLISH_FAILED', `could not look up the topic of event "${event.name}": ${e.name}: ${e.message}`, {
      cause: error,
    });
  }
  if (arn === undefined) {
    throw new SqsJobsError(
      'PUBLISH_FAILED',
      `no SNS topic named "${event.topic}" for event "${event.name}": make it with \`sqs-jobs events create\` (or give the event a topicArn)`,
    );
  }
  return arn;
}

function checkEvent(event: unknown): void {
  if (!isEventDefinition(event)) throw new SqsJobsError('OPTIONS_INVALID', 'publish() takes an event made by defineEvent()');
}

/** The ARN partition of a region: aws, aws-cn or aws-us-gov. */
function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}

async function publishOne(port: TopicPort, topicArn: string, event: AnyEvent, prepared: PreparedEvent): Promise<{ messageId: string }> {
  try {
    return await port.publish(topicArn, prepared);
  } catch (error) {
    const e = toError(error);
    const why = `could not publish event "${event.name}" (${prepared.eventId}) to ${topicArn}: ${e.name}: ${e.message}`;
    throw new SqsJobsError('PUBLISH_FAILED', why, { cause: error });
  }
}
