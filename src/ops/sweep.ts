import { randomUUID } from 'node:crypto';
import type { ReceivedMessage } from '../core/message.js';
import type { QueuePort } from '../ports/queue.js';
import { ATTR_DLQ_AT, ATTR_REPLAY } from '../core/dead-letter.js';
import { type DeadLetter, describeDeadLetter, holdFor, makeVisible, receiveDeadLetters } from './dlq.js';
import { type DeadLetterFilter, matchesFilter } from './dlq-filter.js';

/*
 * A sweep acts on each message that was in the DLQ when it began at most once, then stops. Replay
 * (move back) and purge (delete) are sweeps:
 *
 *  - a message carrying `sqsjobs-replay: <this sweep's id>` was moved by this sweep and came back
 *    (it ran and failed again): it is left. The worker keeps that attribute when it dead-letters or
 *    re-sends a job, and SQS's redrive keeps every attribute;
 *  - a dead letter our worker wrote after the sweep began (`sqsjobs-dlq-at`) is left too: it was
 *    not there when the operator asked;
 *  - messages it leaves are held out of sight while it runs, so each is looked at once; it stops
 *    when the DLQ has nothing left to show, or when a message it has seen comes back into view
 *    (its hold ran out: the sweep has been through the whole DLQ).
 */

/**
 * How long a message received by the sweep stays out of sight: short, so a sweep killed outright
 * leaves what it was about to act on hidden for half a minute only...
 */
const RECEIVE_HOLD_SECONDS = 30;
/** ...while one it leaves is held this long, so the sweep looks at each message once. */
const LEAVE_HOLD_SECONDS = 300;

export interface SweepOptions {
  readonly dlqUrl: string;
  /** Which dead letters (default: all). */
  readonly filter?: DeadLetterFilter | undefined;
  /** Act on at most this many of those matched. */
  readonly limit?: number | undefined;
  /** Count and describe what would be acted on; act on nothing. */
  readonly dryRun?: boolean | undefined;
  /** Stop between batches (e.g. on Ctrl-C): what was done is done, the rest stays. */
  readonly signal?: AbortSignal | undefined;
  /** Only these messages (by MessageId), e.g. those a dry run counted: the filter still applies. */
  readonly only?: ReadonlySet<string> | undefined;
  /** A further test a message must pass to be chosen, beside the filter (the archive's: sent to the DLQ long enough ago). */
  readonly choose?: ((m: ReceivedMessage) => boolean) | undefined;
}

/** Why a message the sweep looked at was left in the DLQ without being chosen. */
interface PassedOver {
  /** Not matched by the filter (or past the limit). */
  readonly notChosen: number;
  /** Moved by this sweep already, and dead-lettered again since (it ran and failed). */
  readonly movedByThisReplay: number;
  /** Dead-lettered by a worker after the sweep began. */
  readonly arrivedAfterStart: number;
}

export interface SweepResult {
  /** This sweep's id (a replay marks what it sends with it: `sqsjobs-replay`). */
  readonly sweepId: string;
  /** Matched by the filter (within the limit): in a dry run, what would be acted on. */
  readonly matched: number;
  /** Acted on: moved, or deleted. */
  readonly done: number;
  /** Matched but not (wholly) acted on, with why: a dry run, a refusal, a failure (left in the DLQ), or done with a note. */
  readonly skipped: { readonly letter: DeadLetter; readonly why: string }[];
  readonly passedOver: PassedOver;
  /** Whether it went through the whole DLQ (or found every message `only` named); false when the limit or the signal stopped it first. */
  readonly complete: boolean;
}

/** A dead letter chosen to act on. */
export interface Chosen {
  readonly m: ReceivedMessage;
  readonly letter: DeadLetter;
}

/** A chosen dead letter the action could not (wholly) do: left in the DLQ, or `acted` but with something to say. */
export interface Shortfall {
  readonly chosen: Chosen;
  readonly why: string;
  /** Done all the same (e.g. moved, but the DLQ copy could not be deleted): counted as done, not left. */
  readonly acted?: boolean;
}

/** What a sweep does to the messages it chose; resolves what fell short. */
type SweepAction = (chosen: readonly Chosen[], sweepId: string) => Promise<Shortfall[]>;

/**
 * One pass over the DLQ, acting on what the filter matches. `refuse` says why a matched letter
 * cannot be acted on at all (it stays, listed as skipped).
 */
export async function sweepDeadLetters(
  queue: QueuePort,
  o: SweepOptions,
  act: SweepAction,
  refuse: (letter: DeadLetter) => string | undefined = () => undefined,
): Promise<SweepResult> {
  const sweepId = randomUUID();
  const startedAt = Date.now();
  const limit = o.limit ?? Number.POSITIVE_INFINITY;
  const seen = new Set<string>();
  /** Messages left in the DLQ, by MessageId (the latest receipt of each), made visible at the end. */
  const left = new Map<string, ReceivedMessage>();
  const skipped: { letter: DeadLetter; why: string }[] = [];
  const passedOver = { notChosen: 0, movedByThisReplay: 0, arrivedAfterStart: 0 };
  let done = 0;
  let matched = 0;
  let complete = false;
  const leave = (m: ReceivedMessage) => left.set(m.messageId, m);
  try {
    while (matched < limit && !o.signal?.aborted) {
      const batch = await receiveDeadLetters(queue, o.dlqUrl, 10, RECEIVE_HOLD_SECONDS);
      if (batch.length === 0) {
        complete = true;
        break;
      }
      const cycled = batch.some((m) => seen.has(m.messageId));
      const chosen: Chosen[] = [];
      for (const m of batch) {
        if (seen.has(m.messageId)) {
          leave(m);
          continue;
        }
        seen.add(m.messageId);
        const letter = describeDeadLetter(m);
        const history = historyOf(m, sweepId, startedAt);
        if (history !== undefined) {
          passedOver[history]++;
          leave(m);
          continue;
        }
        const wanted =
          matchesFilter(letter, o.filter ?? {}, startedAt) && (o.only === undefined || o.only.has(m.messageId)) && (o.choose?.(m) ?? true);
        if (!wanted || matched >= limit) {
          passedOver.notChosen++;
          leave(m);
          continue;
        }
        matched++;
        const why = o.dryRun ? 'dry run' : refuse(letter);
        if (why !== undefined) {
          skipped.push({ letter, why });
          leave(m);
        } else chosen.push({ m, letter });
      }
      const failed = chosen.length === 0 ? [] : await act(chosen, sweepId);
      for (const f of failed) {
        skipped.push({ letter: f.chosen.letter, why: f.why });
        // Acted on but still in the DLQ (moved, not deleted) is held like one left, so the pass does not meet it again.
        leave(f.chosen.m);
      }
      done += chosen.length - failed.filter((f) => !f.acted).length;
      const leftNow = batch.filter((m) => left.get(m.messageId) === m);
      // Not fatal: a message that comes back early ends the pass (it reads as seen) with less looked at.
      await holdFor(queue, o.dlqUrl, leftNow, LEAVE_HOLD_SECONDS).catch(() => {});
      // Through the DLQ, or every message asked for (`only`) found: done.
      if (cycled || (o.only !== undefined && matched >= o.only.size)) {
        complete = true;
        break;
      }
    }
  } finally {
    // Not fatal: a message not made visible here comes back when its hold ends (at most 5 min).
    await makeVisible(queue, o.dlqUrl, [...left.values()]).catch(() => {});
  }
  return { sweepId, matched, done, skipped, passedOver, complete };
}

/** Why a message must not be acted on by this sweep, or undefined when it may be. */
function historyOf(m: ReceivedMessage, sweepId: string, startedAt: number): 'movedByThisReplay' | 'arrivedAfterStart' | undefined {
  if (m.attributes[ATTR_REPLAY]?.StringValue === sweepId) return 'movedByThisReplay';
  const at = Date.parse(m.attributes[ATTR_DLQ_AT]?.StringValue ?? '');
  if (Number.isFinite(at) && at > startedAt) return 'arrivedAfterStart';
  return undefined;
}
