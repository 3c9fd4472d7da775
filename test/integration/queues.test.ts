import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { createQueues, readRedrivePolicy } from '../../src/queues.js';
import { LOCAL_ENV, sqsClient } from '../helpers/stack.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());

async function attributes(queueUrl: string) {
  return (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }))).Attributes ?? {};
}

describe('createQueues', () => {
  it('creates the queue and its DLQ, wired by a RedrivePolicy SQS reports back', async () => {
    const name = `prov-${randomUUID().slice(0, 8)}`;
    const pair = await createQueues(sqs, { name, maxReceiveCount: 7, visibilityTimeout: 45 });
    expect(pair.queueUrl).toMatch(new RegExp(`/${name}$`));
    expect(pair.dlqUrl).toMatch(new RegExp(`/${name}-dlq$`));
    expect(await readRedrivePolicy(sqs, pair.queueUrl)).toEqual({ deadLetterTargetArn: pair.dlqArn, maxReceiveCount: 7 });
    expect((await attributes(pair.queueUrl)).VisibilityTimeout).toBe('45');
    expect((await attributes(pair.dlqUrl)).MessageRetentionPeriod).toBe(String(14 * 24 * 3600));
  });

  it('is idempotent and applies changed settings on a second run', async () => {
    const name = `idem-${randomUUID().slice(0, 8)}`;
    const first = await createQueues(sqs, { name });
    const second = await createQueues(sqs, { name, maxReceiveCount: 2 });
    expect(second.queueUrl).toBe(first.queueUrl);
    expect(second.dlqUrl).toBe(first.dlqUrl);
    expect((await readRedrivePolicy(sqs, first.queueUrl))?.maxReceiveCount).toBe(2);
  });

  it('makes FIFO pairs', async () => {
    const name = `fifo-${randomUUID().slice(0, 8)}.fifo`;
    const pair = await createQueues(sqs, { name });
    expect(pair.dlqUrl).toMatch(/-dlq\.fifo$/);
    expect((await attributes(pair.queueUrl)).FifoQueue).toBe('true');
    expect((await attributes(pair.dlqUrl)).FifoQueue).toBe('true');
    expect((await readRedrivePolicy(sqs, pair.queueUrl))?.deadLetterTargetArn).toBe(pair.dlqArn);
  });
});

describe('sqs-jobs queues create', () => {
  const run = promisify(execFile);
  const cli = ['node_modules/.bin/tsx', 'src/cli/main.ts'];

  it('prints both URLs and sets the policy', async () => {
    const name = `cli-${randomUUID().slice(0, 8)}`;
    const { stdout } = await run(cli[0]!, [cli[1]!, 'queues', 'create', '--name', name, '--max-receive-count', '3', '--json'], {
      env: { ...process.env, ...LOCAL_ENV },
    });
    const pair = JSON.parse(stdout) as { queueUrl: string; dlqUrl: string };
    expect(pair.dlqUrl).toMatch(new RegExp(`${name}-dlq$`));
    expect((await readRedrivePolicy(sqs, pair.queueUrl))?.maxReceiveCount).toBe(3);
  });

  it('exits 1 with the rule when the name is invalid', async () => {
    const error = (await run(cli[0]!, [cli[1]!, 'queues', 'create', '--name', 'no spaces'], {
      env: { ...process.env, ...LOCAL_ENV },
    }).catch((e: unknown) => e)) as {
      code: number;
      stderr: string;
    };
    expect(error.code).toBe(1);
    expect(error.stderr).toMatch(/OPTIONS_INVALID: invalid queue settings: queue\.name: must be/);
  });
});
