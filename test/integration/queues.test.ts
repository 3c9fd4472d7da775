import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { createQueues } from '../../src/ops/wiring.js';
import { readRedrivePolicy } from '../helpers/ops.js';
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

  it('run again, leaves the settings it is not given as they are and prints what changed, or "unchanged"', async () => {
    const name = `rerun-${randomUUID().slice(0, 8)}`;
    const create = async (...flags: string[]) =>
      (await run(cli[0]!, [cli[1]!, 'queues', 'create', '--name', name, ...flags], { env: { ...process.env, ...LOCAL_ENV } })).stdout;
    expect(await create('--max-receive-count', '3', '--visibility-timeout', '5')).toMatch(
      new RegExp(`^${name}-dlq: created\\n${name}: created$`, 'm'),
    );
    const queueUrl = (JSON.parse(await create('--json')) as { queueUrl: string }).queueUrl;

    const spilled = await create('--spillover');
    expect(spilled).toMatch(new RegExp(`^${name}-spill: created$`, 'm'));
    expect(spilled).not.toMatch(new RegExp(`^${name}: `, 'm'));
    expect(spilled).toMatch(/\(after 3 receives\)/);
    for (const url of [queueUrl, `${queueUrl}-spill`]) {
      expect((await readRedrivePolicy(sqs, url))?.maxReceiveCount).toBe(3);
      expect((await attributes(url)).VisibilityTimeout).toBe('5');
    }

    const changed = await create('--visibility-timeout', '30');
    expect(changed).toMatch(new RegExp(`^${name}: visibility 5 → 30 s$`, 'm'));
    expect(changed).not.toMatch(/max receive count/);
    expect((await readRedrivePolicy(sqs, queueUrl))?.maxReceiveCount).toBe(3);
    expect((await create()).trim().split('\n').at(-1)).toBe('unchanged');
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
