import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { tcpAnswers } from '../helpers/net.js';

const run = promisify(execFile);

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// A DynamoDB Local of this test's own, on its own port; and a state folder where stack.sh finds no
// pid files, so `down` leaves the suite's LocalStack, moto and memcached alone.
const port = await freePort();
const env = { ...process.env, SQS_JOBS_DYNAMODB_PORT: String(port), SQS_JOBS_STATE_DIR: mkdtempSync(join(tmpdir(), 'stack-down-')) };
afterAll(() => run('bash', ['infra/local/dynamodb.sh', 'down'], { env }));

it('stack.sh down without a target also stops the DynamoDB Local that dynamodb.sh started; with one, leaves it', async () => {
  await run('bash', ['infra/local/dynamodb.sh', 'up'], { env, timeout: 90_000 });
  expect(await tcpAnswers('127.0.0.1', port)).toBe(true);

  await run('bash', ['infra/local/stack.sh', 'down', 'memcached'], { env });
  expect(await tcpAnswers('127.0.0.1', port)).toBe(true);

  const { stderr } = await run('bash', ['infra/local/stack.sh', 'down'], { env });
  expect(stderr).toMatch(/not started by this script .*; left alone/); // the suite's servers
  expect(stderr).toMatch(/\[dynamodb\] stopped \(pid \d+\)/);
  expect(await tcpAnswers('127.0.0.1', port)).toBe(false);
}, 120_000);
