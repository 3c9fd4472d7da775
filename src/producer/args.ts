import { findForbiddenCharacter } from '../core/sqs-text.js';
import { ValidationError } from '../core/errors.js';
import { type AnyDefinition, validateArgs } from '../core/job.js';

/**
 * A job's args as they will be sent: checked against its schema (defaults applied), with every
 * failing field named under `argsField` (`argsList[3].width` in enqueueMany), and free of the
 * characters SQS refuses.
 */
export function checkedArgs(job: AnyDefinition, args: unknown, argsField: string): unknown {
  let valid: unknown;
  try {
    valid = validateArgs(job, args);
  } catch (error) {
    if (error instanceof ValidationError && argsField !== 'args') {
      throw new ValidationError(
        'ARGS_INVALID',
        `invalid args for job "${job.name}"`,
        error.issues.map((i) => ({ ...i, field: i.field.replace(/^args/, argsField) })),
      );
    }
    throw error;
  }
  const forbidden = findForbiddenCharacter(valid, argsField);
  if (forbidden !== undefined) {
    throw new ValidationError('ARGS_INVALID', `invalid args for job "${job.name}"`, [
      { field: forbidden.path, rule: `contains ${forbidden.codePoint}, a character SQS does not accept in messages` },
    ]);
  }
  return valid;
}
