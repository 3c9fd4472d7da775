import { type AttributeValue, BatchExecuteStatementCommand, type BatchExecuteStatementCommandOutput } from '@aws-sdk/client-dynamodb';
import { GroupCommit } from '../core/group-commit.js';
import { ENDED_STATES, MAX_ERROR_CHARS, STATE_RANK, smallJson, type Transition } from '../ports/status-store.js';
import { jobKey, N, S, type TableRef, Update, updateIf } from './dynamodb-items.js';
import { listFields, TENANT_KEY_ATTRIBUTE } from './dynamodb-list-keys.js';

type Answer = 'applied' | 'stale';

/** One change's answer within a shared call: a change that failed fails alone, not its neighbours. */
type Outcome = Answer | { readonly failed: unknown };

const alone = (p: Promise<Answer>): Promise<Outcome> => p.catch((failed: unknown) => ({ failed }));

/** Statements in one BatchExecuteStatement (DynamoDB's limit). */
const STATEMENTS_PER_BATCH = 25;

/** Batches out at once; a state change that finds them all out goes in the next. */
const BATCHES_IN_FLIGHT = 4;

/**
 * A job's state changes on DynamoDB, by group commit: a change goes out at once as one
 * conditional UpdateItem while the store is not busy; the changes that come while
 * BATCHES_IN_FLIGHT calls are out go together, up to 25, in one PartiQL BatchExecuteStatement
 * (each statement applied or refused on its own, at the write cost of an UpdateItem; a transaction
 * would cost twice that). A shared call costs the client a fraction of what the same changes cost
 * one by one (the SDK's work per call is most of it). `waiting` and `scheduled` are INSERTs there:
 * they apply only where no record is stored. Any other change is a conditional UPDATE, which cannot create a
 * record. A statement refused without an answer to go on (an INSERT that found a record, an
 * UPDATE that found none, throttling, a conflict) is made again as an UpdateItem, which decides.
 *
 * The rule either way: it applies when nothing is stored, or the stored state is not `completed`
 * and the new one is `completed`, or later by (attempt, rank).
 */
export class Transitions {
  readonly #t: TableRef;
  readonly #group: GroupCommit<Transition, Outcome>;
  /** Statements the role may not make (AccessDenied on a shared call): their changes go one by one. */
  readonly #refused = new Set<Kind>();

  constructor(t: TableRef) {
    this.#t = t;
    this.#group = new GroupCommit((ts) => this.#commit(ts), {
      maxItems: STATEMENTS_PER_BATCH,
      maxInFlight: BATCHES_IN_FLIGHT,
      keyOf: (t) => t.jobId,
    });
  }

  apply(t: Transition): Promise<Answer> {
    if (this.#refused.has(kindOf(t))) return this.#one(t);
    return this.#group.add(t).then((o) => (typeof o === 'string' ? o : Promise.reject(o.failed)));
  }

  async #commit(ts: Transition[]): Promise<Outcome[]> {
    if (ts.length === 1) return [await alone(this.#one(ts[0]!))];
    let out: BatchExecuteStatementCommandOutput;
    try {
      out = await this.#t.client.send(
        new BatchExecuteStatementCommand({
          // An UPDATE refused by its condition shows the stored record (so it needs no UpdateItem to
          // be told stale); an INSERT has no condition to fail, only a record found (DuplicateItem).
          Statements: ts.map((t) =>
            kindOf(t) === 'insert' ? this.#insert(t) : { ...this.#update(t), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const },
          ),
        }),
      );
    } catch (error) {
      // Refused whole (the call failed, or a role without dynamodb:PartiQLInsert or PartiQLUpdate,
      // remembered so its changes stop trying): one UpdateItem each.
      if ((error as { name?: string }).name === 'AccessDeniedException')
        for (const k of refusedKinds(error as Error, ts)) this.#refused.add(k);
      return Promise.all(ts.map((t) => alone(this.#one(t))));
    }
    return Promise.all(
      ts.map((t, i) => {
        const error = out.Responses?.[i]?.Error;
        if (error === undefined) return 'applied';
        if (error.Code === 'ConditionalCheckFailed' && error.Item !== undefined) return 'stale';
        // Refused alone (the role may not make this kind of statement): remembered, as above.
        if (error.Code === 'AccessDenied') this.#refused.add(kindOf(t));
        // An INSERT that found a record (maybe one without a state), an UPDATE that found none,
        // throttled, a conflict, refused: the UpdateItem decides.
        return alone(this.#one(t));
      }),
    );
  }

  /** One change as an UpdateItem, which also creates the record. */
  async #one(t: Transition): Promise<Answer> {
    const u = new Update();
    for (const [name, value] of fields(t, this.#t.expiresAt())) u.set(name, value, KEPT_IF_SET.has(name));
    if (t.tenant === undefined) u.remove(TENANT_KEY_ATTRIBUTE);
    const state = u.name('state');
    const attempt = u.name('attempt');
    const rank = u.name('rank');
    const completed = u.value(S('completed'));
    const later = () => {
      const a = u.value(N(t.attempt));
      return `${attempt} < ${a} OR (${attempt} = ${a} AND ${rank} < ${u.value(N(STATE_RANK[t.state]))})`;
    };
    const wins = t.state === 'completed' ? `${state} <> ${completed}` : `${state} <> ${completed} AND (${later()})`;
    return (await updateIf(this.#t, jobKey(t.jobId), u, `attribute_not_exists(${state}) OR (${wins})`)) ? 'applied' : 'stale';
  }

  /** A `waiting` change as a PartiQL INSERT: made only where no record is stored (else refused, DuplicateItem). */
  #insert(t: Transition): Statement {
    const set = fields(t, this.#t.expiresAt());
    return {
      Statement: `INSERT INTO "${this.#t.table}" VALUE {'pk': ?, ${set.map(([name]) => `'${name}': ?`).join(', ')}}`,
      Parameters: [jobKey(t.jobId).pk!, ...set.map(([, value]) => value)],
    };
  }

  /** Any other change as a PartiQL UPDATE of an existing record, under the same rule. */
  #update(t: Transition): Statement {
    const set = fields(t, this.#t.expiresAt()).filter(([name]) => !SET_BY_CREATE.has(name));
    const wins =
      t.state === 'completed' ? `"state" <> 'completed'` : `"state" <> 'completed' AND ("attempt" < ? OR ("attempt" = ? AND "rank" < ?))`;
    const rule = t.state === 'completed' ? [] : [N(t.attempt), N(t.attempt), N(STATE_RANK[t.state])];
    const remove = t.tenant === undefined ? ` REMOVE "${TENANT_KEY_ATTRIBUTE}"` : '';
    return {
      Statement: `UPDATE "${this.#t.table}" SET ${set.map(([name]) => `"${name}" = ?`).join(', ')}${remove} WHERE "pk" = ? AND ("state" IS MISSING OR (${wins}))`,
      Parameters: [...set.map(([, value]) => value), jobKey(t.jobId).pk!, ...rule],
    };
  }
}

interface Statement {
  readonly Statement: string;
  readonly Parameters: AttributeValue[];
}

/** The PartiQL statement a change goes out as in a shared call. */
type Kind = 'insert' | 'update';
const kindOf = (t: Transition): Kind => (t.state === 'waiting' || t.state === 'scheduled' ? 'insert' : 'update');
const ACTION: Readonly<Record<Kind, string>> = { insert: 'PartiQLInsert', update: 'PartiQLUpdate' };

/**
 * The statements a refused call is about: those its message names (AWS names the action), else
 * every kind in the call (then a role that may make one kind and not the other stops sharing
 * calls for both, until the process restarts: slower, never wrong).
 */
function refusedKinds(error: Error, ts: readonly Transition[]): Kind[] {
  const named = (Object.keys(ACTION) as Kind[]).filter((k) => String(error.message).includes(ACTION[k]));
  return named.length > 0 ? named : ts.map(kindOf);
}

/**
 * Attributes every write that creates a record sets (an UpdateItem here, `waiting`, a fan-out's
 * opening), and that never change: an UPDATE applies only to a record that exists, so it leaves
 * them out (less for the SDK to write and the table to read per statement).
 */
const SET_BY_CREATE = new Set(['jobId', 'jobName']);

/** Attributes an UpdateItem sets only when missing: they never change for a job (an UPDATE sets them to the same value). */
const KEPT_IF_SET = new Set(['enqueuedAt', 'parentId', 'tenant']);

/**
 * The attributes a state change sets, the list indexes' keys among them (dynamodb-list-keys.ts: in
 * the same write, no other). A `scheduled` record lives its TTL past its time, however far ahead that is.
 */
function fields(t: Transition, ttlEnd: number): [string, AttributeValue][] {
  const at = t.at.toISOString();
  const ttl = ttlEnd - Math.floor(Date.now() / 1000);
  const expiresAt =
    t.state === 'scheduled' && t.nextAttemptAt !== undefined
      ? Math.max(ttlEnd, Math.floor(t.nextAttemptAt.getTime() / 1000) + ttl)
      : ttlEnd;
  const all: [string, AttributeValue | undefined][] = [
    ['jobId', S(t.jobId)],
    ['jobName', S(t.jobName)],
    ['state', S(t.state)],
    ['rank', N(STATE_RANK[t.state])],
    ['attempt', N(t.attempt)],
    ['updatedAt', S(at)],
    ['expiresAt', N(expiresAt)],
    ['enqueuedAt', t.enqueuedAt === undefined ? undefined : S(t.enqueuedAt)],
    ['parentId', t.parentId === undefined ? undefined : S(t.parentId)],
    ['tenant', t.tenant === undefined ? undefined : S(t.tenant)],
    ...listFields(t),
    ['worker', t.worker === undefined ? undefined : S(t.worker)],
    ['error', t.error === undefined ? undefined : S(t.error.slice(0, MAX_ERROR_CHARS))],
    ['reason', t.reason === undefined ? undefined : S(t.reason)],
    ['nextAttemptAt', t.nextAttemptAt === undefined ? undefined : S(t.nextAttemptAt.toISOString())],
  ];
  if (t.state === 'running') all.push(['startedAt', S((t.startedAt ?? t.at).toISOString())]);
  else if (t.startedAt !== undefined && t.state !== 'waiting') all.push(['startedAt', S(t.startedAt.toISOString())]);
  if (ENDED_STATES.has(t.state)) all.push(['finishedAt', S(at)]);
  const result = smallJson(t.result);
  if (result !== undefined) all.push(['result', S(result)]);
  return all.filter((f): f is [string, AttributeValue] => f[1] !== undefined);
}
