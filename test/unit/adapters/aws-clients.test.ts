import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it, vi } from 'vitest';
import { createCloudWatchClient, createDynamoClient, createSqsClient } from '../../../src/adapters/aws-clients.js';
import { createSnsClient } from '../../../src/adapters/sns-topics.js';
import { SqsQueuePort } from '../../../src/adapters/sqs-queue.js';

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

describe('an SQS client sqs-jobs makes, calling a server on loopback', () => {
  /** A server that answers each SQS call (JSON protocol) with an empty success, or never (`hold`). */
  async function server(hold: (target: string) => boolean) {
    const seen: { target: string; queueUrl: string }[] = [];
    const s = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const target = String(req.headers['x-amz-target']).split('.').pop() ?? '';
        seen.push({ target, queueUrl: (JSON.parse(body) as { QueueUrl: string }).QueueUrl });
        if (hold(target)) return;
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(target === 'DeleteMessageBatch' ? '{"Successful":[],"Failed":[]}' : '{}');
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    return { seen, endpoint, close: () => new Promise((r) => s.close(r)) };
  }

  it('builds the middleware chain once per kind of call, and each call still sends its own input', async () => {
    const srv = await server(() => false);
    const client = createSqsClient({ region: 'us-east-1', endpoint: srv.endpoint }, {}, {});
    const resolved = vi.spyOn(DeleteMessageBatchCommand.prototype, 'resolveMiddleware');
    const port = new SqsQueuePort(client);
    const queues = [1, 2, 3].map((n) => `${srv.endpoint}/000000000000/q${n}`);
    await Promise.all(queues.map((q) => port.deleteBatch(q, [{ id: '0', receiptHandle: `r-${q}` }])));
    await port.deleteBatch(queues[0]!, [{ id: '0', receiptHandle: 'r' }]);
    expect(resolved).toHaveBeenCalledTimes(1);
    expect(srv.seen.map((s) => s.queueUrl).sort()).toEqual([...queues, queues[0]].sort());
    resolved.mockRestore();
    client.destroy();
    await srv.close();
  });

  it('a receive without a signal is built once too; one with a signal is built for itself', async () => {
    const srv = await server(() => false);
    const client = createSqsClient({ region: 'us-east-1', endpoint: srv.endpoint }, {}, {});
    const resolved = vi.spyOn(ReceiveMessageCommand.prototype, 'resolveMiddleware');
    const port = new SqsQueuePort(client);
    const q = `${srv.endpoint}/000000000000/q`;
    try {
      await port.receive(q, 10, 0, 30);
      await port.receive(q, 10, 0, 30);
      expect(resolved).toHaveBeenCalledTimes(1);
      await port.receive(q, 10, 0, 30, new AbortController().signal);
      expect(resolved).toHaveBeenCalledTimes(2);
    } finally {
      resolved.mockRestore();
      client.destroy();
      await srv.close();
    }
  });

  it('a receive given a signal is ended by that signal, and only that one', async () => {
    const srv = await server((target) => target === 'ReceiveMessage');
    const client = createSqsClient({ region: 'us-east-1', endpoint: srv.endpoint }, {}, {});
    const port = new SqsQueuePort(client);
    const q = `${srv.endpoint}/000000000000/q`;
    const first = new AbortController();
    const second = new AbortController();
    const a = port.receive(q, 10, 20, 30, first.signal);
    const b = port.receive(q, 10, 20, 30, second.signal);
    const bEnded = vi.fn();
    b.catch(bEnded);
    await vi.waitFor(() => expect(srv.seen).toHaveLength(2), { timeout: 10_000 }); // both polls are out, held by the server
    first.abort();
    await expect(a).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 50));
    expect(bEnded).not.toHaveBeenCalled();
    second.abort();
    await expect(b).rejects.toThrow();
    // The next delete still goes out (a receive with options does not spoil the other calls).
    await port.deleteBatch(q, [{ id: '0', receiptHandle: 'r' }]);
    expect(srv.seen.map((s) => s.target)).toEqual(['ReceiveMessage', 'ReceiveMessage', 'DeleteMessageBatch']);
    client.destroy();
    await srv.close();
  });
});
