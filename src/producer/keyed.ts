import { PayloadTooLargeError, SqsJobsError } from '../core/errors.js';
import type { AnyDefinition } from '../core/job.js';
import type { TraceContext } from '../core/trace-context.js';
import type { EnqueueKeys, KeyRecord } from '../ports/enqueue-keys.js';
import type { CancelResult } from '../status/cancel.js';
import type { StatusStore } from '../ports/status-store.js';
import type { JobLock } from '../ports/lock.js';
import type { TimedJobStore } from '../ports/timed-jobs.js';
import { type BusyPorts, busyOf } from '../core/busy.js';
import { recordScheduled } from '../status/waiting.js';
import { burstJobId, keyIdOf, MAX_DELAY_SECONDS } from './key-options.js';
import type { EnqueueResult } from './options.js';
import { type EnqueueSettings, MAX_KEPT_BYTES, prepareMessage } from './prepare.js';
import { type Sender, sendPrepared } from './sending.js';
import type { PreparedMessage } from './send-many.js';

/*
 * Enqueue with a key (one of `singleton`, `throttle`, `debounce`): the key's record in the job
 * store decides, by conditional writes, whether and what is sent; producers need nothing else in
 * common (no memcached, no leader). Each rule and its guarantee under faults is in docs/guide/keys.md.
 */

/** What a keyed enqueue takes besides the sender: the store's keys, and for a singleton the busy rule and cancel. */
export interface KeyPorts extends BusyPorts {
  readonly keys: EnqueueKeys;
  /** Cancel a waiting job (a singleton's `replace`); throws when cancel is not set up (no memcached). */
  cancel(jobId: string): Promise<CancelResult>;
  /** Whether the job is kept in the job store until its time (`runAt`): a holder whose record was not written may be. */
  isKept(jobId: string): Promise<boolean>;
}

/** A singleton's holder recorded running, that the lock does not show held (or no lock to ask), is taken for dead this long after its record's last write. */
export const PRODUCER_STALE_RUNNING_S = 960;

/** KeyPorts on a producer's job store (with keys), the workers' lock (when it has memcached) and its cancel. */
export function keyPortsOf(
  store: StatusStore & { readonly keys?: EnqueueKeys | undefined; readonly timed?: TimedJobStore | undefined },
  lock: Pick<JobLock, 'holder'> | undefined,
  cancel: (jobId: string) => Promise<CancelResult>,
): KeyPorts {
  if (store.keys === undefined) throw new Error('unreachable: checkOptionsFit refuses keys without a store that keeps them');
  return {
    keys: store.keys,
    cancel,
    staleRunningS: PRODUCER_STALE_RUNNING_S,
    stateOf: async (jobId) => {
      const s = await store.get(jobId);
      return s === undefined ? undefined : { state: s.state, updatedAtS: Date.parse(s.updatedAt) / 1000 };
    },
    held: async (jobId) => (await lock?.holder?.(jobId).catch(() => undefined)) !== undefined,
    isKept: async (jobId) => (await store.timed?.getTimed(jobId)) !== undefined,
  };
}

/** A singleton's holder with no record yet is taken to be on its way (sent, its record not yet written) this long. */
export const SEND_GRACE_MS = 60_000;
/** A key that keeps moving under the enqueue (others taking it at once) is read this many times. */
const TRIES = 5;

type Keyed = EnqueueResult & { readonly queueUrl: string };

/** Enqueue with a key: `ports` is asked for once the job and its options passed every check. */
export async function sendKeyed(
  s: Sender,
  ports: () => KeyPorts,
  definition: AnyDefinition,
  args: unknown,
  opts: EnqueueSettings,
  trace: TraceContext | undefined,
): Promise<Keyed> {
  if (opts.debounce !== undefined) return debounced(s, ports, definition, args, opts, trace).catch(storeFailed(definition));
  // A singleton is tracked: its record is what says whether it still waits or runs.
  const o = opts.singleton === undefined ? opts : { ...opts, track: true };
  const prepared = prepareMessage(s.p, definition, args, o, 'args', trace);
  const sent =
    opts.singleton === undefined ? throttled(s, ports(), definition, prepared, o) : singleton(s, ports(), definition, prepared, o);
  return sent.catch(storeFailed(definition));
}

/** What the calls of a keyed enqueue throw (the job store unreachable, throttled, refusing the role) becomes ENQUEUE_FAILED: nothing was sent. */
const storeFailed =
  (definition: AnyDefinition) =>
  (error: unknown): never => {
    if (error instanceof SqsJobsError) throw error;
    const e = error instanceof Error ? error : new Error(String(error));
    throw new SqsJobsError(
      'ENQUEUE_FAILED',
      `could not enqueue job "${definition.name}" with its key (nothing was sent): ${e.name}: ${e.message}`,
      {
        cause: error,
      },
    );
  };

/** Throttle: the first job of a window is sent; the rest of it are not (they answer the window's job). A retry of the sent one passes. */
async function throttled(s: Sender, k: KeyPorts, definition: AnyDefinition, m: PreparedMessage, opts: EnqueueSettings): Promise<Keyed> {
  const { key, windowSeconds } = opts.throttle!;
  const id = keyIdOf('throttle', definition.name, key);
  const nowMs = Date.now();
  const held = await k.keys.takeKey(id, { jobId: m.jobId, sinceMs: nowMs, untilMs: nowMs + windowSeconds * 1000 }, { nowMs });
  if (held !== undefined) return { jobId: held.jobId, messageId: undefined, queueUrl: m.queueUrl, key: 'throttled' };
  return { ...(await sendHolding(s, k, id, definition, m, opts)), key: 'sent' };
}

/** Singleton: sent only while no job of the key waits or runs (busyOf, the schedules' overlap rule); `replace` cancels a waiting one first. */
async function singleton(s: Sender, k: KeyPorts, definition: AnyDefinition, m: PreparedMessage, opts: EnqueueSettings): Promise<Keyed> {
  const { key, mode } = opts.singleton!;
  const id = keyIdOf('singleton', definition.name, key);
  for (let tries = 0; tries < TRIES; tries++) {
    const holder = await k.keys.readKey(id);
    let replaced = false;
    if (holder !== undefined && holder.jobId !== m.jobId) {
      const busy = await singletonBusy(k, holder);
      // One still on its way (no record yet) cannot be cancelled: it is left to run, under `replace` too.
      if (busy === 'running' || busy === 'sending' || (busy === 'waiting' && mode === 'skip'))
        return { jobId: holder.jobId, messageId: undefined, queueUrl: m.queueUrl, key: 'skipped' };
      // `replace`: the waiting one is cancelled (one that starts in that moment is cancelled as it starts), then this one takes the key.
      if (busy === 'waiting') replaced = (await k.cancel(holder.jobId)).outcome === 'cancelled';
    }
    const nowMs = Date.now();
    const record = { jobId: m.jobId, sinceMs: nowMs, ...(m.dueMs === undefined ? {} : { keepUntilMs: m.dueMs }) };
    if ((await k.keys.takeKey(id, record, { holder: holder?.jobId, nowMs })) !== undefined) continue;
    return { ...(await sendHolding(s, k, id, definition, m, opts)), key: replaced ? 'replaced' : 'sent' };
  }
  throw moving(definition, 'singleton', key);
}

/** Whether a singleton's holder still waits or runs: by its record, and one with none yet is on its way (`sending`) for SEND_GRACE_MS. */
async function singletonBusy(k: KeyPorts, holder: KeyRecord): Promise<'sending' | 'waiting' | 'running' | undefined> {
  const nowMs = Date.now();
  const status = await k.stateOf(holder.jobId); // read once: a record written between two reads must not free the key
  if (status === undefined) {
    if (nowMs - holder.sinceMs < SEND_GRACE_MS) return 'sending';
    // Its record was never written (a failed write is not an enqueue's failure): kept until its time, it still waits.
    return (await k.isKept(holder.jobId)) ? 'waiting' : undefined;
  }
  return busyOf(k, holder.jobId, status, Math.floor(nowMs / 1000));
}

/**
 * Debounce: the burst's job is kept in the job store (a `debounced` kept job) and each enqueue of
 * the burst gives it its args and moves its time to `delaySeconds` from now, never past
 * `maxWaitSeconds` from the burst's first enqueue; the workers' tick sends it once due. Once sent,
 * the next enqueue begins a new burst, with a new job id.
 */
async function debounced(
  s: Sender,
  ports: () => KeyPorts,
  definition: AnyDefinition,
  args: unknown,
  opts: EnqueueSettings,
  trace: TraceContext | undefined,
): Promise<Keyed> {
  const { key, delaySeconds, maxWaitSeconds } = opts.debounce!;
  const id = keyIdOf('debounce', definition.name, key);
  const make = (jobId: string) => {
    const m = prepareMessage(s.p, definition, args, { ...opts, jobId }, 'args', trace);
    if (m.size > MAX_KEPT_BYTES) throw tooLarge(definition, m.size);
    return m;
  };
  const checked = make(burstJobId(definition.name, key, 0)); // everything checked before the first call
  const k = ports();
  await s.pauses?.refuse(definition.name, opts.tenant, checked.queueUrl);
  await s.queueLimit.check(); // sent later as it is: the queue must take it then
  const result = (jobId: string): Keyed => ({ jobId, messageId: undefined, queueUrl: checked.queueUrl, key: 'debounced' });
  for (let tries = 0; tries < TRIES; tries++) {
    const nowMs = Date.now();
    const holder = await k.keys.readKey(id);
    if (holder !== undefined) {
      const latest = maxWaitSeconds === undefined ? Number.POSITIVE_INFINITY : holder.sinceMs + maxWaitSeconds * 1000;
      const m = make(holder.jobId);
      const burst = { message: outgoingOf(m), queueUrl: m.queueUrl, dueMs: Math.min(nowMs + delaySeconds * 1000, latest) };
      const extended = await k.keys.extendBurst(holder.jobId, burst);
      if (extended === 'extended') return result(holder.jobId);
      if (extended === 'later') continue; // another enqueue of the burst landed first with a later time: this one again, from now
    }
    // No burst, or its job was sent (or cancelled): this enqueue begins the next one.
    const m = make(burstJobId(definition.name, key, nowMs));
    const kept = {
      jobId: m.jobId,
      jobName: definition.name,
      queueUrl: m.queueUrl,
      message: outgoingOf(m),
      dueMs: nowMs + delaySeconds * 1000,
      tracked: m.track !== undefined,
      enqueuedAt: m.track?.enqueuedAt ?? new Date(nowMs).toISOString(),
      debounced: true,
    };
    // The key outlives the longest the burst may last (a year without maxWaitSeconds): expired sooner, a second burst could begin beside it.
    const record = { jobId: m.jobId, sinceMs: nowMs, keepUntilMs: nowMs + (maxWaitSeconds ?? MAX_DELAY_SECONDS) * 1000 };
    if (!(await k.keys.openBurst(id, record, kept, holder?.jobId))) continue;
    await recordScheduled(s.store, definition.name, [{ ...m, dueMs: kept.dueMs }]);
    return result(m.jobId);
  }
  throw moving(definition, 'debounce', key);
}

/** Send a job that holds a key; a send that fails lets go of the key (so that the next enqueue is not refused for a job never sent). */
async function sendHolding(s: Sender, k: KeyPorts, id: string, definition: AnyDefinition, m: PreparedMessage, opts: EnqueueSettings) {
  try {
    return await sendPrepared(s, definition, m, opts);
  } catch (error) {
    await k.keys.releaseKey(id, m.jobId).catch(() => {});
    throw error;
  }
}

const outgoingOf = (m: PreparedMessage) => ({
  body: m.body,
  attributes: m.attributes,
  ...(m.groupId === undefined ? {} : { groupId: m.groupId }),
});

const moving = (definition: AnyDefinition, rule: string, key: string) =>
  new SqsJobsError(
    'ENQUEUE_FAILED',
    `could not enqueue job "${definition.name}": its ${rule} key "${key}" kept moving under ${TRIES} tries`,
  );

const tooLarge = (definition: AnyDefinition, size: number) =>
  new PayloadTooLargeError(`job "${definition.name}" (debounced: kept in the job store, whose item holds 400 KB)`, size, MAX_KEPT_BYTES);
