import { ROOT_CONTEXT, context, trace } from '@opentelemetry/api';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/core/job.js';
import { createLambdaHandler } from '../../src/lambda/handler.js';
import { createProducer } from '../../src/producer/producer.js';
import { EmulatedMapping } from '../helpers/lambda-mapping.js';
import { useOtel } from '../helpers/otel.js';
import { LOCAL_ENDPOINT, LOCAL_ENV, freshQueues, quietLogger, sqsClient } from '../helpers/stack.js';

/**
 * Tracing through the Lambda handler, with the real OpenTelemetry SDK: a record's job runs in the
 * trace its envelope carries (the producer's send span), else in the one of its AWSTraceHeader, as
 * a worker's does.
 */
const sqs = sqsClient();
afterAll(() => sqs.destroy());
const { spans, tracer } = useOtel();
const job = defineJob({ name: 'traced', args: z.object({ n: z.number() }), handle: () => {} });
const handlerFor = (queueUrl: string) =>
  createLambdaHandler(
    { jobs: [job], queues: [queueUrl], endpoint: LOCAL_ENDPOINT, region: 'us-east-1', logger: quietLogger, metrics: { sink: 'off' } },
    {},
  );

describe('createLambdaHandler and tracing', () => {
  it("a record's job runs in its producer's trace: the process span a child of the send span", async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-trace');
    const producer = createProducer({ queueUrl, jobs: [job] }, LOCAL_ENV);
    const request = tracer.startSpan('POST /work');
    await context.with(trace.setSpan(ROOT_CONTEXT, request), () => producer.enqueue(job, { n: 1 }));
    request.end();
    producer.close();
    await new EmulatedMapping(sqs, queueUrl).deliver(handlerFor(queueUrl));
    const send = spans().find((s) => s.name.startsWith('send '));
    const processed = spans().find((s) => s.name === 'process traced');
    expect(send).toBeDefined();
    expect(processed?.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(processed?.parentSpanContext?.spanId).toBe(send!.spanContext().spanId);
  });

  it('a record with only an X-Ray AWSTraceHeader runs in that trace', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-xray');
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({ v: 1, id: `xray-${Date.now()}`, job: 'traced', args: { n: 0 } }),
        MessageSystemAttributes: {
          AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1' },
        },
      }),
    );
    await new EmulatedMapping(sqs, queueUrl).deliver(handlerFor(queueUrl));
    const processed = spans().find((s) => s.name === 'process traced');
    expect(processed?.spanContext().traceId).toBe('5759e988bd862e3fe1be46a994272793');
    expect(processed?.parentSpanContext?.spanId).toBe('53995c3f42cd8ad8');
  });
});
