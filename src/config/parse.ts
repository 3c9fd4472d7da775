import { z } from 'zod';
import { ConfigError, type FieldIssue } from '../core/errors.js';

/* Options and variables checked with zod, and their errors: a ConfigError naming each field, its rule and its value. */

/** Shown after a rule: the value that broke it, short, with any user:password@ hidden. */
function shown(value: unknown): string {
  if (typeof value === 'string') {
    const text = value.replace(/[^\s/,@]*@/g, '***@');
    return ` (got ${JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text)})`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === null)
    return ` (got ${String(value)})`;
  return '';
}

function at(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

type Issue = z.core.$ZodIssue;

/**
 * "field: rule (got value)" for every issue. A union that failed is read through the branch that
 * got past the type check (so `queues[0].weight` is named, not "Invalid input"); when no branch
 * did, its own message, or the branches' type rules joined with "or".
 */
function issuesOf(issues: readonly Issue[], root: string, input: unknown, prefix: readonly PropertyKey[] = []): FieldIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const typeOnly = (branch: readonly Issue[]) =>
        branch.every((i) => i.path.length === 0 && ['invalid_type', 'invalid_value', 'custom'].includes(i.code));
      const deeper = issue.errors.find((branch) => !typeOnly(branch));
      if (deeper !== undefined) return issuesOf(deeper, root, input, path);
      const rule = issue.message !== 'Invalid input' ? issue.message : issue.errors.flatMap((b) => b.map((i) => i.message)).join(', or ');
      return [{ field: fieldName(root, path), rule: `${rule}${shown(at(input, path))}` }];
    }
    return [{ field: fieldName(root, path), rule: `${issue.message}${issue.code === 'unrecognized_keys' ? '' : shown(at(input, path))}` }];
  });
}

function fieldName(root: string, path: readonly PropertyKey[]): string {
  return `${root}${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}`.replace(/^\./, '');
}

/** A zod check that an option is an object with these methods (a port, a logger, a sink): `must implement <name> (<methods>)`. */
export function implementing<T>(name: string, methods: readonly string[]) {
  return z.custom<T>(
    (v) => typeof v === 'object' && v !== null && methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
    `must implement ${name} (${methods.join(', ')})`,
  );
}

/**
 * Parse a setting or a whole options object with `schema`; on failure throw a ConfigError
 * (CONFIG_INVALID) that names every field and its rule, with the value it got: never a zod or
 * URL TypeError.
 */
export function parseConfig<S extends z.ZodType>(schema: S, value: unknown, root: string, subject: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = issuesOf(result.error.issues, root, value);
  throw new ConfigError(`${subject}: ${issues.map((i) => `${i.field}: ${i.rule}`).join('; ')}`);
}

/** The first of `names` set (and not empty) in `env`: its name and value. */
export function firstSet(env: Readonly<Record<string, string | undefined>>, names: readonly string[]): [string, string] | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return [name, value];
  }
  return undefined;
}
