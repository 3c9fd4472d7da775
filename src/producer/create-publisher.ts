import { z } from 'zod';
import { type Env, implementing, parseConfig } from '../config/env.js';
import type { AnyEvent, EventPayload } from '../core/event.js';
import type { TopicPort } from '../ports/topics.js';
import type { PublishManyOptions, PublishOptions, PublishResult } from './publish.js';
import { SNS_MAX_MESSAGE_BYTES } from './publish.js';
import { EventPublisher } from './publisher.js';
import { producerTopics, sendTracing } from './wiring.js';

const publisherOptionsSchema = z
  .object({
    /** SNS endpoint (default AWS_ENDPOINT_URL_SNS, else an emulator's SQS endpoint on loopback, else AWS_ENDPOINT_URL). */
    endpoint: z.string().optional(),
    region: z.string().optional(),
    /** The account of the topics; without it, each event's topic is looked up by name once (SNS ListTopics). */
    account: z
      .string()
      .regex(/^\d{12}$/, 'must be a 12-digit AWS account id')
      .optional(),
    /** The topics port (default: SNS through the AWS SDK). */
    topics: implementing<TopicPort>('TopicPort (publish, publishBatch)', ['publish', 'publishBatch']).optional(),
    /** The largest message to publish, in bytes (default and most: SNS's 256 KiB). */
    maxMessageBytes: z.number().int().min(1_024).max(SNS_MAX_MESSAGE_BYTES).optional(),
    /** OpenTelemetry (when @opentelemetry/api is installed): a span per publish, its context carried by the events (default true). */
    tracing: z.boolean().default(true),
  })
  .strict();

/**
 * Options of createPublisher: where events go (SNS endpoint, region, the topics' account or a topics port),
 * the largest message and tracing. Unset, endpoint and region come from AWS_ENDPOINT_URL_SNS and AWS_REGION.
 */
export type PublisherOptions = z.input<typeof publisherOptionsSchema>;

/** What a service that only publishes events holds: publish, publishMany, close. */
export interface Publisher {
  /** Publish one event to its SNS topic, its payload checked by the event's schema and sized before anything is sent. */
  publish<E extends AnyEvent>(event: E, payload: EventPayload<E>, options?: PublishOptions): Promise<PublishResult>;
  /** Publish many payloads of one event with PublishBatch, all checked first; what SNS did not take is one PublishBatchError. */
  publishMany<E extends AnyEvent>(event: E, payloads: readonly EventPayload<E>[], options?: PublishManyOptions): Promise<PublishResult[]>;
  /** Release the SNS client's sockets (when this publisher made the client). */
  close(): void;
}

/**
 * A publisher for a service that publishes events and enqueues no job: it needs no queue URL
 * (a producer publishes too: `producer.publish`). Nothing is loaded or connected until the first publish.
 */
export function createPublisher(options: PublisherOptions = {}, env: Env = process.env): Publisher {
  const o = parseConfig(publisherOptionsSchema, options, 'options', 'invalid publisher options');
  const topics = producerTopics(
    { topics: o.topics, endpoint: o.endpoint, account: o.account },
    undefined,
    o.region,
    undefined,
    env,
    'options.account',
  );
  const publisher = new EventPublisher(topics, o.maxMessageBytes ?? SNS_MAX_MESSAGE_BYTES, o.tracing ? sendTracing() : undefined);
  return {
    publish: (event, payload, opts) => publisher.publish(event, payload, opts),
    publishMany: (event, payloads, opts) => publisher.publishMany(event, payloads, opts),
    close: () => publisher.close(),
  };
}
