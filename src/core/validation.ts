import type { z } from 'zod';
import type { FieldIssue } from './errors.js';

/** Flatten a zod error into "field: rule" pairs, with paths under `root` (e.g. `args.user.email`). */
export function fieldIssues(error: z.ZodError, root: string): FieldIssue[] {
  return error.issues.map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
    return { field: `${root}${path}`.replace(/^\./, ''), rule: issue.message };
  });
}

/** Parse `value` with `schema`; on failure hand the issues to `fail`, which throws. */
export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  root: string,
  fail: (issues: FieldIssue[]) => Error,
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fail(fieldIssues(result.error, root));
  return result.data;
}
