import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deadLetterMessage } from '../../src/core/dead-letter.js';
import { ATTR_FIRST_SENT_AT } from '../../src/core/delivery.js';
import { encodeEnvelope } from '../../src/core/envelope.js';
import type { ReceivedMessage } from '../../src/core/message.js';
import type { QueuePort } from '../../src/ports/queue.js';
import { LOCAL_ENDPOINT } from './stack.js';

/* For test/integration/dlq-archive.test.ts: dead letters to archive, and a process to kill mid-run. */

/**
 * A proxy in front of SQS that kills `victim()` with SIGKILL the moment it asks SQS to delete a
 * message, and never forwards that call: the process dies between its S3 writes (acknowledged
 * before it deletes anything) and its delete. It keeps every receipt handle SQS handed out, so the
 * test can make what the dead process held visible again.
 */
export async function killOnDelete(victim: () => ChildProcess | undefined) {
  const handles: string[] = [];
  let killed = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      if (/DeleteMessage/.test(target)) {
        killed = victim()?.kill('SIGKILL') ?? false;
        res.destroy();
        return;
      }
      const forward = request(new URL(req.url ?? '/', LOCAL_ENDPOINT), { method: req.method, headers: req.headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          if (target.endsWith('ReceiveMessage'))
            for (const m of JSON.parse(Buffer.concat(body).toString()).Messages ?? []) handles.push(m.ReceiptHandle);
          res.writeHead(answer.statusCode ?? 500, answer.headers).end(Buffer.concat(body));
        });
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    handles,
    killed: () => killed,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Dead letters as the worker writes them (retries-exhausted), sent to the DLQ now; `firstSentDaysAgo`: the job's first send; `pad`: bytes more in its args. */
export async function deadLetters(
  queue: QueuePort,
  queueUrl: string,
  dlqUrl: string,
  job: string,
  jobIds: string[],
  o: { firstSentDaysAgo?: number; pad?: number } = {},
) {
  const ids = new Map<string, string>();
  for (const id of jobIds) {
    const sent = Date.now() - (o.firstSentDaysAgo ?? 0) * 86_400_000;
    const original: ReceivedMessage = {
      queueUrl,
      messageId: randomUUID(),
      receiptHandle: '',
      body: encodeEnvelope({ v: 1, id, job, args: o.pad ? { pad: 'x'.repeat(o.pad) } : {}, enqueuedAt: new Date(sent).toISOString() }),
      receiveCount: 3,
      sentAt: sent,
      groupId: undefined,
      attributes: o.firstSentDaysAgo === undefined ? {} : { [ATTR_FIRST_SENT_AT]: { DataType: 'Number', StringValue: String(sent) } },
    };
    ids.set(id, (await queue.send(dlqUrl, deadLetterMessage(original, 'retries-exhausted', `${id} failed`))).messageId);
  }
  return ids;
}
