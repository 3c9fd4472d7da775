import { describe, expect, it } from 'vitest';
import { brand } from '../../../src/core/brand.js';
import { RetryLaterError, SqsJobsError, UnrecoverableError, ValidationError } from '../../../src/core/errors.js';
import { JobRegistry } from '../../../src/core/job-registry.js';
import { afterRun } from '../../../src/worker/decide/decide.js';

/** The error catalogue as a second copy of the package has it: the same source, loaded again as a module of its own. */
async function secondCopy(): Promise<typeof import('../../../src/core/errors.js')> {
  return import('../../../src/core/errors.js?second-copy' as string);
}

describe('brand: instanceof across copies of sqs-jobs', () => {
  it('an error made by a second copy is an instance of this copy’s class and of its ancestors, not of its siblings', async () => {
    const copy = await secondCopy();
    expect(copy.UnrecoverableError).not.toBe(UnrecoverableError); // really a second copy
    const theirs = new copy.UnrecoverableError('gone');
    expect(theirs).toBeInstanceOf(UnrecoverableError);
    expect(theirs).toBeInstanceOf(SqsJobsError);
    expect(theirs).toBeInstanceOf(Error);
    expect(theirs).not.toBeInstanceOf(RetryLaterError);
    expect(new copy.ValidationError('ARGS_INVALID', 'args', [])).toBeInstanceOf(ValidationError);
    expect(new UnrecoverableError('x')).toBeInstanceOf(copy.UnrecoverableError); // and the other way
  });

  it('what is not branded is not taken for what is: plain errors, look-alikes with the same code, primitives', () => {
    expect(new Error('x')).not.toBeInstanceOf(SqsJobsError);
    expect(Object.assign(new Error('x'), { code: 'UNRECOVERABLE', name: 'UnrecoverableError' })).not.toBeInstanceOf(UnrecoverableError);
    for (const value of [null, undefined, 'UnrecoverableError', 42]) expect(value).not.toBeInstanceOf(UnrecoverableError);
    expect({ [Symbol.for('sqs-jobs.brands')]: 'sqs-jobs/UnrecoverableError' }).not.toBeInstanceOf(UnrecoverableError); // not a list
  });

  it('a subclass an app writes itself keeps plain instanceof: its parent’s instances are not its own', () => {
    class Fatal extends UnrecoverableError {}
    expect(new Fatal('x')).toBeInstanceOf(Fatal);
    expect(new Fatal('x')).toBeInstanceOf(UnrecoverableError);
    expect(new UnrecoverableError('x')).not.toBeInstanceOf(Fatal);
  });

  it('a branded class of any kind (JobRegistry) is recognised by the brand its own prototype carries', () => {
    class Registry {
      readonly size = 0;
      static {
        brand(Registry, 'sqs-jobs/JobRegistry');
      }
    }
    expect(new Registry()).toBeInstanceOf(JobRegistry);
    expect(new JobRegistry()).toBeInstanceOf(Registry);
  });

  it("the worker decides a second copy's errors as its own: UnrecoverableError to the DLQ, RetryLaterError after its delay", async () => {
    const copy = await secondCopy();
    const facts = {
      receiveCount: 1,
      attempt: 1,
      maxReceiveCount: 4,
      backoff: { baseMs: 1000, factor: 2, capMs: 60_000, jitter: 0 },
      waitMs: 0,
    };
    const threw = (error: Error) => afterRun({ ...facts, execution: { kind: 'threw', error, processMs: 5 } });
    expect(threw(new copy.UnrecoverableError('gone'))).toMatchObject({ kind: 'dead-letter', reason: 'unrecoverable' });
    expect(threw(new copy.RetryLaterError(3000))).toMatchObject({ kind: 'retry', delayMs: 3000 });
  });
});
