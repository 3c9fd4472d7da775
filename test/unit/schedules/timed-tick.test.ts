import { describe, expect, it } from 'vitest';
import type { OutgoingMessage } from '../../../src/core/message.js';
import { shardOf } from '../../../src/ports/schedule-store.js';
import type { TimedJob } from '../../../src/ports/timed-jobs.js';
import { sendTimedShard, type TimedTickPorts } from '../../../src/schedules/timed-tick.js';
import { MemoryTimedJobs } from '../../../src/testing/memory-timed.js';

/** Kept jobs of one shard, a clock the test sets, and the sends a tick makes. */
function shard0() {
  const timed = new MemoryTimedJobs();
  const clock = { ms: 1_000_000_000 };
  const sent: { queueUrl: string; message: OutgoingMessage }[] = [];
  const fail = { sends: false, removes: false };
  const problems: string[] = [];
  const ports: TimedTickPorts = {
    timed,
    me: 'w1',
    now: () => Math.floor(clock.ms / 1000),
    nowMs: () => clock.ms,
    sendMessage: async (queueUrl, message) => {
      if (fail.sends) throw new Error('SQS unreachable');
      sent.push({ queueUrl, message });
    },
    onUnsent: (jobId, problem) => problems.push(`${jobId}: ${problem}`),
  };
  let n = 0;
  const keep = async (dueMs: number, over: Partial<TimedJob> = {}) => {
    let jobId: string;
    do jobId = `kept-${n++}`;
    while (shardOf(jobId) !== 0);
    await timed.putTimed({
      jobId,
      jobName: 'remind',
      queueUrl: 'http://127.0.0.1:4566/000000000000/jobs',
      message: { body: `{"id":"${jobId}"}`, attributes: {}, groupId: 'acme' },
      dueMs,
      tracked: false,
      enqueuedAt: '2027-01-01T00:00:00.000Z',
      ...over,
    });
    return jobId;
  };
  return { timed, clock, sent, fail, problems, ports, keep };
}

describe('the tick that sends jobs kept until their time', () => {
  it('sends those due within 840 s with the delay left, rounded up (never early), capped at 900; later ones stay kept', async () => {
    const s = shard0();
    const soon = await s.keep(s.clock.ms + 5_300);
    const past = await s.keep(s.clock.ms - 60_000); // every worker was down at its time
    const edge = await s.keep(s.clock.ms + 840_000);
    const later = await s.keep(s.clock.ms + 841_000);
    expect(await sendTimedShard(s.ports, 0)).toEqual({ sent: 3, full: false });
    const delays = Object.fromEntries(s.sent.map((m) => [JSON.parse(m.message.body).id, m.message.delaySeconds]));
    expect(delays).toEqual({ [soon]: 6, [past]: 0, [edge]: 840 });
    expect(s.sent.every((m) => m.message.groupId === 'acme')).toBe(true); // its tenant's group kept
    expect(await s.timed.getTimed(soon)).toBeUndefined(); // removed once sent
    expect(await s.timed.getTimed(later)).toBeDefined();
  });

  it('a send that fails leaves it kept and said; another tick sends it once the claim lapses', async () => {
    const s = shard0();
    const id = await s.keep(s.clock.ms + 10_000);
    s.fail.sends = true;
    expect((await sendTimedShard(s.ports, 0)).sent).toBe(0);
    expect(s.problems).toEqual([`${id}: not sent: SQS unreachable`]);
    s.fail.sends = false;
    expect((await sendTimedShard(s.ports, 0)).sent).toBe(0); // its claim holds it still
    s.clock.ms += 30_000;
    expect((await sendTimedShard(s.ports, 0)).sent).toBe(1);
    expect(s.sent).toHaveLength(1);
  });

  it('a tick that sent it and could not remove it: sent again once its claim lapses, under the same job id', async () => {
    const s = shard0();
    const id = await s.keep(s.clock.ms + 10_000);
    const remove = s.timed.removeTimed.bind(s.timed);
    s.timed.removeTimed = async () => {
      throw new Error('DynamoDB unreachable');
    };
    expect((await sendTimedShard(s.ports, 0)).sent).toBe(1);
    expect(s.problems).toEqual([`${id}: sent, not removed: DynamoDB unreachable`]);
    s.timed.removeTimed = remove;
    s.clock.ms += 30_000;
    await sendTimedShard(s.ports, 0);
    expect(s.sent.map((m) => JSON.parse(m.message.body).id)).toEqual([id, id]); // the dedupe lock runs it once
    expect(await s.timed.getTimed(id)).toBeUndefined();
  });
});
