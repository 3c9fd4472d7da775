import type { Outcome } from '../decide/decide.js';

/* Questions asked of an Outcome decided already (which way it goes on): none builds one. */

/** A message over its tenant's cap or its job's rate waits here (see Outcome 'wait'), unless its lease was lost or the worker stops. */
export function waitsHere(
  outcome: Outcome,
  f: { readonly leaseLost: boolean; readonly stopping: boolean },
): outcome is Extract<Outcome, { kind: 'wait' }> {
  return outcome.kind === 'wait' && !f.leaseLost && !f.stopping;
}

/**
 * After which outcomes a FIFO message comes back to its queue, so its group's later messages must
 * wait for it (a 'wait' settled rather than kept, the worker stopping or its lease lost, is handed back).
 */
export function blocksGroup(outcome: Outcome): boolean {
  return outcome.kind === 'retry' || outcome.kind === 'hand-back' || outcome.kind === 'lost' || outcome.kind === 'wait';
}

/**
 * A failed FIFO job is retried here, its group waiting for it, rather than handed back: SQS is not
 * asked to order it again. Not when its handler was abandoned (it may still run), its lease was
 * lost, it is a batch job's item (it goes back to SQS, to join a later batch), or where nothing is
 * held past the message's own walk (`holds` false: a Lambda invocation, which would pay to wait).
 */
export function retriesInPlace(
  outcome: Outcome,
  f: { readonly fifo: boolean; readonly leaseLost: boolean; readonly batchItem: boolean; readonly holds: boolean },
): outcome is Extract<Outcome, { kind: 'retry' }> {
  return f.holds && f.fifo && !f.batchItem && outcome.kind === 'retry' && !outcome.abandoned && !f.leaseLost;
}
