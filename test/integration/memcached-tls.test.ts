import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import { type Env, resolveMemcachedSettings } from '../../src/config/env.js';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { createWorker } from '../../src/worker/worker.js';
import { PrivateMemcached } from '../helpers/memcached.js';
import { LOCAL_ENV, LOCAL_STACK, eventually, freshQueues, queueCounts, quietLogger, sqsClient } from '../helpers/stack.js';
import { makeTestCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { recordEvents } from '../helpers/worker.js';
import { runCliWorkerUntilEmpty } from '../helpers/worker-process.js';

/*
 * memcached over TLS, against Debian's memcached started with -Z on loopback, with a CA and a server
 * certificate made for the run: the lock's calls, keys spread over two servers, an outage, and each
 * way a connection can be refused (wrong CA, another host name, TLS against plain and plain against
 * TLS) reported with the setting to fix. Once, on LocalStack: it needs no SQS but for the worker's
 * last two tests.
 */
const prefix = `tlstest-${randomUUID().slice(0, 8)}:`;

/** What memcached at `port` holds under `key`, read over TLS with the text protocol: not through the client under test. */
function heldOverTls(certs: TestCertificates, port: number, key: string): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: readFileSync(certs.ca), servername: certs.name });
    let got = '';
    socket.setTimeout(3_000, () => socket.destroy(new Error(`no answer from 127.0.0.1:${port}`)));
    socket.on('error', reject);
    socket.on('data', (d: Buffer) => {
      got += d.toString();
      if (!got.endsWith('END\r\n')) return;
      socket.end();
      const value = /^VALUE \S+ \d+ \d+\r\n(.*)\r\nEND\r\n$/s.exec(got);
      resolve(value === null ? null : value[1]!);
    });
    socket.write(`get ${key}\r\n`);
  });
}

/** How long `call` took to settle, in ms, and what it answered. */
async function timed<T>(call: Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const answer = await call;
  return [answer, performance.now() - started];
}

describe.skipIf(LOCAL_STACK !== 'localstack')('memcached over TLS (memcached -Z on 127.0.0.1)', () => {
  let certs: TestCertificates;
  const servers: PrivateMemcached[] = [];
  let one: PrivateMemcached;
  let two: PrivateMemcached;
  const locks: MemcachedLock[] = [];
  /** The TLS settings as the environment gives them, resolved as every entry point resolves them. */
  const env = (list: string, more: Env = {}): Env => ({
    SQS_JOBS_MEMCACHED: list,
    SQS_JOBS_MEMCACHED_CA: certs.ca,
    SQS_JOBS_MEMCACHED_SERVERNAME: certs.name,
    ...more,
  });
  const lockOn = (e: Env, more: { timeoutMs?: number; onAvailability?: (up: boolean, error?: Error) => void } = {}) => {
    const lock = new MemcachedLock({ ...resolveMemcachedSettings(undefined, e)!, keyPrefix: prefix, ...more });
    locks.push(lock);
    return lock;
  };
  /** A lock that reports its outages: the errors it reported, in order. */
  const reporting = (e: Env, timeoutMs = 500) => {
    const reports: { up: boolean; error?: Error }[] = [];
    const lock = lockOn(e, { timeoutMs, onAvailability: (up, error) => void reports.push({ up, error }) });
    return { lock, reports };
  };

  beforeAll(async () => {
    certs = makeTestCertificates();
    one = await PrivateMemcached.start(certs.memcachedArgs);
    two = await PrivateMemcached.start(certs.memcachedArgs);
    servers.push(one, two);
  });
  afterAll(async () => {
    for (const lock of locks) lock.close();
    for (const server of servers) await server.stop();
    certs?.remove();
  });

  it('claims, extends, completes and releases through MemcachedLock, and memcached holds what it says', async () => {
    const lock = lockOn(env(`tls://${one.servers}`));
    const id = randomUUID();
    expect(await lock.claim(id, 'a', 30, { messageId: 'm-1', receiveCount: 1 })).toBe('claimed');
    expect(await heldOverTls(certs, one.port, lock.key(id))).toBe('running:a:m-1');
    expect(await lock.claim(id, 'b', 30, { messageId: 'm-2', receiveCount: 1 })).toBe('running-copy');
    expect(await lock.extend(id, 'a', 30)).toBe('held');
    expect(await lock.release(id, 'a')).toBe(true);
    expect(await heldOverTls(certs, one.port, lock.key(id))).toBeNull();
    expect(await lock.claim(id, 'c', 30)).toBe('claimed');
    expect(await lock.complete(id, 'c', 60)).toBe(true);
    expect(await lock.claim(id, 'd', 30)).toBe('completed');
    expect(await heldOverTls(certs, one.port, lock.key(id))).toBe('done:c');
  });

  it('spreads keys over two TLS servers as over two plain ones', async () => {
    const plain = [await PrivateMemcached.start(), await PrivateMemcached.start()];
    servers.push(...plain);
    const overTls = lockOn(env(`tls://${one.servers},${two.servers}`));
    const overTcp = lockOn({ SQS_JOBS_MEMCACHED: `${plain[0]!.servers},${plain[1]!.servers}` });
    const onFirstPlain = lockOn({ SQS_JOBS_MEMCACHED: plain[0]!.servers });
    const ids = Array.from({ length: 40 }, () => randomUUID());
    for (const id of ids) {
      expect(await overTls.claim(id, 't', 30)).toBe('claimed');
      expect(await overTcp.claim(id, 't', 30)).toBe('claimed');
    }
    const onOne = await Promise.all(ids.map(async (id) => (await heldOverTls(certs, one.port, overTls.key(id))) !== null));
    const onTwo = await Promise.all(ids.map(async (id) => (await heldOverTls(certs, two.port, overTls.key(id))) !== null));
    expect(onOne.map((held, i) => held !== onTwo[i])).toEqual(ids.map(() => true)); // each key on exactly one
    expect(onOne.filter(Boolean).length).toBeGreaterThan(0);
    expect(onTwo.filter(Boolean).length).toBeGreaterThan(0);
    // The first TLS server holds exactly the keys the first plain one does.
    const plainFirst = await Promise.all(ids.map(async (id) => (await onFirstPlain.holder(id)) !== undefined));
    expect(onOne).toEqual(plainFirst);
  });

  it('reports an outage within the timeout when the TLS memcached dies, and recovers once it is back', async () => {
    const { lock, reports } = reporting(env(`tls://${two.servers}`));
    expect(await lock.claim(randomUUID(), 'a', 30)).toBe('claimed');
    await two.stop();
    const [during, ms] = await timed(lock.claim(randomUUID(), 'a', 30));
    expect(during).toBe('unavailable');
    expect(ms).toBeLessThan(2_500); // refused at once; never more than 4 × the 500 ms timeout and a check
    expect(await lock.extend(randomUUID(), 'a', 30)).toBe('unavailable');
    expect(reports.map((r) => r.up)).toEqual([false]); // told once per outage
    expect(reports[0]!.error?.message).toMatch(/127\.0\.0\.1/);
    await two.restart();
    await eventually(async () => (await lock.claim(randomUUID(), 'a', 30)) === 'claimed', 'a claim over TLS after the restart', 10_000);
    expect(reports.map((r) => r.up)).toEqual([false, true]);
  });

  it('refuses a certificate its CA did not sign, naming SQS_JOBS_MEMCACHED_CA', async () => {
    for (const e of [
      env(`tls://${one.servers}`, { SQS_JOBS_MEMCACHED_CA: certs.otherCa }),
      env(`tls://${one.servers}`, { SQS_JOBS_MEMCACHED_CA: '' }),
    ]) {
      const { lock, reports } = reporting(e);
      const [answer, ms] = await timed(lock.claim(randomUUID(), 'a', 30));
      expect(answer).toBe('unavailable');
      expect(ms).toBeLessThan(2_500);
      expect(reports[0]!.error?.message).toMatch(
        new RegExp(
          `^memcached tls://${one.servers}: certificate not trusted \\(set SQS_JOBS_MEMCACHED_CA, or MemcachedLock's tls.ca, to the CA that signed it\\)`,
        ),
      );
    }
  });

  it('refuses a certificate for another host name, naming SQS_JOBS_MEMCACHED_SERVERNAME', async () => {
    // The certificate holds DNS:memcached.test only: neither 127.0.0.1 (no server name given) nor another name matches.
    for (const servername of ['', 'other.test']) {
      const { lock, reports } = reporting(env(`tls://${one.servers}`, { SQS_JOBS_MEMCACHED_SERVERNAME: servername }));
      expect(await lock.claim(randomUUID(), 'a', 30)).toBe('unavailable');
      expect(reports[0]!.error?.message).toMatch(/host name does not match the certificate \(set SQS_JOBS_MEMCACHED_SERVERNAME/);
    }
  });

  it('fails cleanly, within the timeout, between a plain client and a TLS server and the other way round', async () => {
    const plainClient = reporting({ SQS_JOBS_MEMCACHED: one.servers });
    const [answer, ms] = await timed(plainClient.lock.claim(randomUUID(), 'a', 30));
    expect(answer).toBe('unavailable');
    expect(ms).toBeLessThan(2_500);
    expect(plainClient.reports[0]!.error?.message).toMatch(new RegExp(`memcached ${one.servers}`));

    const plainServer = await PrivateMemcached.start();
    servers.push(plainServer);
    const tlsClient = reporting(env(`tls://${plainServer.servers}`));
    const [tlsAnswer, tlsMs] = await timed(tlsClient.lock.claim(randomUUID(), 'a', 30));
    expect(tlsAnswer).toBe('unavailable');
    expect(tlsMs).toBeLessThan(2_500);
    expect(tlsClient.reports[0]!.error?.message).toMatch(
      new RegExp(
        `^memcached tls://${plainServer.servers}: (TLS handshake failed|no TLS handshake).*is it a plain-TCP memcached\\? then drop tls://`,
      ),
    );
  });

  describe('a worker whose memcached refuses its TLS settings', () => {
    const sqs = sqsClient();
    afterAll(() => sqs.destroy());

    it('fails closed when told to: the job stays queued, the outage names the setting', async () => {
      const { queueUrl } = await freshQueues(sqs, 'tls-closed');
      let runs = 0;
      const job = defineJob({ name: 'work', args: z.object({}), handle: () => void runs++ });
      const closed = createWorker(
        {
          queues: [queueUrl],
          jobs: [job],
          memcached: `tls://${one.servers}`, // the CA (the wrong one) from the environment
          lockTimeoutMs: 500,
          lockFailClosed: true,
          waitTimeSeconds: 1,
          visibilityTimeoutSeconds: 4,
          handleSignals: false,
          logger: quietLogger,
          metrics: { sink: 'off' },
          lockKeyPrefix: prefix,
        },
        { ...LOCAL_ENV, SQS_JOBS_MEMCACHED_CA: certs.otherCa, SQS_JOBS_MEMCACHED_SERVERNAME: certs.name },
      );
      const events = recordEvents(closed);
      const producer = createProducer({ queueUrl }, LOCAL_ENV);
      try {
        await closed.start();
        await producer.enqueue(job, {});
        await eventually(() => events.count('job:handed-back') === 1, 'the job to be handed back');
        expect(runs).toBe(0);
        expect(events.of('lock:unavailable')[0]?.error.message).toMatch(/certificate not trusted \(set SQS_JOBS_MEMCACHED_CA/);
        expect((await queueCounts(sqs, queueUrl)).inFlight).toBe(1);
      } finally {
        await closed.stop();
        producer.close();
      }
    });

    it('runs the job anyway from the CLI (at-least-once) and logs why, once', async () => {
      const { queueUrl } = await freshQueues(sqs, 'tls-cli');
      const producer = createProducer({ queueUrl }, LOCAL_ENV);
      await producer.enqueue(
        defineJob({ name: 'send-welcome-email', args: z.object({ userId: z.string(), failureRate: z.number() }), handle: () => {} }),
        { userId: 'u1', failureRate: 0 },
      );
      producer.close();
      const { code, logs } = await runCliWorkerUntilEmpty(
        ['--jobs', 'handlers', '--queue', queueUrl, '--wait-time', '1'],
        {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          ...LOCAL_ENV,
          SQS_JOBS_MEMCACHED: `tls://${one.servers}`,
          SQS_JOBS_MEMCACHED_CA: certs.ca,
          SQS_JOBS_MEMCACHED_SERVERNAME: 'other.test',
          SQS_JOBS_METRICS: 'off',
        },
        queueUrl,
      );
      expect(code, logs).toBe(0);
      const outages = logs.split('\n').filter((line) => line.includes('memcached unreachable'));
      expect(outages, logs).toHaveLength(1);
      expect(outages[0]).toMatch(/running jobs without the dedupe lock \(at-least-once\)/);
      expect(outages[0]).toMatch(/host name does not match the certificate \(set SQS_JOBS_MEMCACHED_SERVERNAME/);
    });
  });
});
