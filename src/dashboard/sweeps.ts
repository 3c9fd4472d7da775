import { randomBytes } from 'node:crypto';
import { type DeadLetterFilter, FILTER_FIELDS } from '../ops/dlq-filter.js';
import { purgeDeadLetters } from '../ops/purge.js';
import { replayDeadLetters } from '../ops/replay.js';
import type { SweepResult } from '../ops/sweep.js';
import type { QueuePort } from '../ports/queue.js';
import { html, query } from './html.js';
import type { Page, PageContext } from './layout.js';
import { confirmPage, type DlqRef, FILTER_PARAMS, type SweepKind, sweptPage } from './pages/dead-letters.js';
import { text } from './responses.js';

/** A dry run waiting for its confirmation: what it counted, exactly. */
interface Pending {
  readonly kind: SweepKind;
  readonly dlq: DlqRef;
  readonly filter: DeadLetterFilter;
  /** The messages the dry run counted (MessageIds): the confirmed action acts on these only. */
  readonly ids: ReadonlySet<string>;
  readonly at: number;
}

interface Done {
  readonly kind: SweepKind;
  readonly dlq: DlqRef;
  readonly filter: DeadLetterFilter;
  readonly result: SweepResult;
  readonly at: number;
}

/** What a confirmed replay or purge did, for its audit line. */
export interface SweepSummary {
  readonly dlq: string;
  readonly filter: Readonly<Record<string, string>>;
  readonly done: number;
  readonly matched: number;
}

const PENDING_MS = 15 * 60_000;
const DONE_MS = 60 * 60_000;
const KEEP = 100;

const token = () => randomBytes(16).toString('base64url');

function forget<V extends { readonly at: number }>(map: Map<string, V>, olderThanMs: number, now: number): void {
  for (const [k, v] of map) if (now - v.at > olderThanMs || map.size > KEEP) map.delete(k);
}

/**
 * Replay and purge of a filtered set, in two steps. The dry run counts what the filter matches
 * and keeps exactly those messages under a one-time confirmation token; confirming acts on those
 * only (each at most once), once: the token is spent, and the answer is a redirect to the result
 * (so reloading the page, or going back, does not act again).
 */
export class SweepDesk {
  readonly #queue: QueuePort;
  readonly #pending = new Map<string, Pending>();
  readonly #done = new Map<string, Done>();

  constructor(queue: QueuePort) {
    this.#queue = queue;
  }

  /** The dry run: count, keep the count's messages, and ask for the confirmation that names it. */
  async dryRun(kind: SweepKind, dlq: DlqRef, filter: DeadLetterFilter, ctx: PageContext): Promise<Page> {
    const result = await this.#run(kind, dlq, { filter, dryRun: true });
    const ids = new Set(result.skipped.filter((s) => s.why === 'dry run').map((s) => s.letter.messageId));
    const now = Date.now();
    forget(this.#pending, PENDING_MS, now);
    const confirmation = token();
    this.#pending.set(confirmation, { kind, dlq, filter, ids, at: now });
    return confirmPage(kind, dlq, filter, result, confirmation, ctx);
  }

  /** The confirmed action: on the dry run's messages only, once; then 303 to its result. */
  async confirm(confirmation: string, ctx: PageContext): Promise<Response> {
    const p = this.#pending.get(confirmation);
    if (p === undefined) {
      return text(409, 'this confirmation was used already or has expired (15 min): run the dry run again to see what matches now');
    }
    this.#pending.delete(confirmation);
    const result = await this.#run(p.kind, p.dlq, { filter: p.filter, only: p.ids });
    const now = Date.now();
    forget(this.#done, DONE_MS, now);
    const id = token();
    this.#done.set(id, { kind: p.kind, dlq: p.dlq, filter: p.filter, result, at: now });
    return new Response(null, { status: 303, headers: { location: `${ctx.base}/dead-letters/result${query({ id })}` } });
  }

  /** What a confirmed action did (kept for an hour). */
  result(id: string | null, ctx: PageContext): Page {
    const d = id === null ? undefined : this.#done.get(id);
    if (d === undefined) {
      return { title: 'Result', live: false, main: html`<p class="notice">This result is not kept here (an hour, in this process).</p>` };
    }
    return sweptPage(d.kind, d.dlq, d.filter, d.result, ctx);
  }

  /** What a confirmed action did, for its audit line: the DLQ, its filter (as URL parameters), how many were moved or deleted, of how many matched. */
  summary(id: string): SweepSummary | undefined {
    const d = this.#done.get(id);
    if (d === undefined) return undefined;
    const filter: Record<string, string> = {};
    for (const k of FILTER_FIELDS) if (d.filter[k] !== undefined) filter[FILTER_PARAMS[k]] = String(d.filter[k]).slice(0, 200);
    return { dlq: d.dlq.name, filter, done: d.result.done, matched: d.result.matched };
  }

  #run(
    kind: SweepKind,
    dlq: DlqRef,
    o: { filter: DeadLetterFilter; dryRun?: boolean; only?: ReadonlySet<string>; limit?: number },
  ): Promise<SweepResult> {
    const options = { dlqUrl: dlq.url, ...o };
    return kind === 'replay'
      ? replayDeadLetters(this.#queue, { ...options, sourceQueueUrl: dlq.sourceQueueUrl })
      : purgeDeadLetters(this.#queue, options);
  }
}
