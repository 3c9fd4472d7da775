/**
 * The Powertools side, as its docs pair the two utilities for SQS: processPartialResponse with a
 * BatchProcessor (EventType.SQS) over a record handler made idempotent (makeIdempotent, keyed on
 * the record's messageId) on DynamoDB (DynamoDBPersistenceLayer: a conditional PutItem before the
 * handler and an UpdateItem with its result after, or a DeleteItem when it throws). Records run in
 * parallel (the processor's default), as sqs-jobs runs up to 10 at once. The record handler does
 * what a user's must to run the same job: parse the body (an sqs-jobs envelope here), check its
 * args by the job's schema, call its function (jobs.ts). `throwOnFullBatchFailure: false`: a batch
 * whose every record failed is answered, not thrown, so both sides answer the failure path alike.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { LambdaContext, SqsBatchResponse, SqsEvent, SqsEventRecord } from '../../src/lambda/event.js';
import { args, WORK } from './jobs.js';

/** Its table's key: Powertools' default `id` (a string), on-demand. */
export const POWERTOOLS_KEY = 'id';

/**
 * `client` (main.ts: counted) or `clientConfig` (entry-powertools.ts: Powertools makes its client,
 * the usual way); with a client, it is one made from the same config.
 */
export function powertoolsHandler(
  o: { table: string } & ({ client: DynamoDBClient } | { clientConfig: DynamoDBClientConfig }),
): (event: SqsEvent, context: LambdaContext) => Promise<SqsBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  const config = new IdempotencyConfig({ eventKeyJmesPath: 'messageId' });
  const persistenceStore = new DynamoDBPersistenceLayer(
    'client' in o ? { tableName: o.table, awsSdkV3Client: o.client } : { tableName: o.table, clientConfig: o.clientConfig },
  );
  const recordHandler = (record: SqsEventRecord): void => {
    const body = JSON.parse(record.body) as { job?: string; args?: unknown };
    const work = WORK[body.job ?? ''];
    if (work === undefined) throw new Error(`unknown job ${String(body.job)}`);
    work(args.parse(body.args));
  };
  const idempotent = makeIdempotent(recordHandler, { persistenceStore, config });
  return (event, context) => {
    config.registerLambdaContext(context as never);
    // Its types are @types/aws-lambda's (not installed here); src/lambda/event.ts's are the same shape, read-only.
    const records = event as { Records: SqsEventRecord[] };
    return processPartialResponse(records, idempotent, processor, { context: context as never, throwOnFullBatchFailure: false });
  };
}
