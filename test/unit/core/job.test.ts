import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import * as zm from 'zod/mini';
import { ValidationError, SqsJobsError, UnknownJobError } from '../../../src/core/errors.js';
import { DEFAULT_BACKOFF } from '../../../src/core/definition-rules.js';
import { defineJob, validateArgs } from '../../../src/core/job.js';
import { JobRegistry } from '../../../src/core/job-registry.js';

const email = defineJob({
  name: 'send-email',
  args: z.object({ to: z.email(), attempts: z.number().int().min(1).default(1), user: z.object({ id: z.string() }) }),
  handle: () => {},
});

describe('defineJob', () => {
  it('keeps the schema and handler and fills the default backoff', () => {
    expect(email.name).toBe('send-email');
    expect(email.backoff).toEqual(DEFAULT_BACKOFF);
    expect(Object.isFrozen(email)).toBe(true);
  });

  it('merges a partial backoff over the defaults', () => {
    const job = defineJob({ name: 'j', args: z.object({}), handle: () => {}, backoff: { baseMs: 10 } });
    expect(job.backoff).toEqual({ ...DEFAULT_BACKOFF, baseMs: 10 });
  });

  it('refuses a bad name, a missing schema and a timeout past 12 hours, naming each field', () => {
    const attempt = () => defineJob({ name: 'has space', args: 'nope' as never, handle: () => {}, timeoutMs: 50_000_000 });
    expect(attempt).toThrow(ValidationError);
    try {
      attempt();
    } catch (error) {
      const fields = (error as ValidationError).issues.map((i) => i.field);
      expect(fields).toEqual(expect.arrayContaining(['job.name', 'job.args', 'job.timeoutMs']));
      expect((error as ValidationError).code).toBe('OPTIONS_INVALID');
    }
  });
});

describe('defineJob with a schema sqs-jobs cannot use', () => {
  it('says when it is a zod 3 or a zod/mini schema, and what to do', () => {
    expect(() => defineJob({ name: 'j', args: z3.object({ n: z3.number() }) as never, handle: () => {} })).toThrow(
      /job\.args: is a zod 3 schema: sqs-jobs needs zod 4 \(`npm i zod@\^4`\)/,
    );
    expect(() => defineJob({ name: 'j', args: zm.object({ n: zm.number() }) as never, handle: () => {} })).toThrow(
      /job\.args: is a zod\/mini schema: define it with `import \{ z \} from 'zod'`/,
    );
    expect(() => defineJob({ name: 'j', args: 42 as never, handle: () => {} })).toThrow(/job\.args: must be a zod schema/);
  });
});

describe('JobRegistry', () => {
  it('refuses two different jobs with one name', () => {
    const twin = defineJob({ name: 'send-email', args: z.object({}), handle: () => {} });
    const registry = new JobRegistry([email]);
    registry.register(email); // the same definition twice is harmless
    expect(() => registry.register(twin)).toThrow(expect.objectContaining({ code: 'JOB_DUPLICATE_NAME' }));
  });

  it('names the known jobs when asked for an unknown one', () => {
    const registry = new JobRegistry([email]);
    expect(() => registry.get('nope')).toThrow(UnknownJobError);
    expect(() => registry.get('nope')).toThrow(/known jobs: send-email/);
    expect(registry.find('nope')).toBeUndefined();
  });

  it('refuses things that are not job definitions', () => {
    expect(() => new JobRegistry([{ name: 'x' } as never])).toThrow(SqsJobsError);
  });
});

describe('validateArgs', () => {
  it('applies schema defaults', () => {
    expect(validateArgs(email, { to: 'a@b.co', user: { id: 'u' } })).toEqual({ to: 'a@b.co', attempts: 1, user: { id: 'u' } });
  });

  it('names every failing field with its rule', () => {
    try {
      validateArgs(email, { to: 'not-an-email', attempts: 0, user: {} });
      expect.unreachable();
    } catch (error) {
      const e = error as ValidationError;
      expect(e.code).toBe('ARGS_INVALID');
      expect(e.issues.map((i) => i.field).sort()).toEqual(['args.attempts', 'args.to', 'args.user.id']);
      expect(e.message).toMatch(/args\.attempts: .*>=1/);
      expect(e.message).toContain('send-email');
    }
  });
});
