import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createCloudWatchClient, createDynamoClient, createSqsClient } from '../../../src/adapters/aws-clients.js';
import { createSnsClient } from '../../../src/adapters/sns-topics.js';

const settings = { region: 'us-east-1', endpoint: 'http://127.0.0.1:1' };
const hasLogger = (c: { middlewareStack: { identify(): string[] } }) =>
  c.middlewareStack.identify().some((m) => m.startsWith('loggerMiddleware'));

describe('the AWS clients sqs-jobs makes', () => {
  it('the SDK adds a logger middleware by that name (so removing it by name does something)', () => {
    expect(hasLogger(new SQSClient({ region: 'us-east-1' }))).toBe(true);
  });

  it('have no logger middleware: no call is copied for a logger that is not there', () => {
    const clients = [
      createSqsClient(settings, {}, {}),
      createCloudWatchClient(settings, {}, {}),
      createDynamoClient(settings, {}, {}),
      createSnsClient(settings, {}, {}),
    ];
    for (const c of clients) {
      expect(hasLogger(c)).toBe(false);
      c.destroy();
    }
  });
});
