import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/**
 * Wire format v1. The message body is JSON:
 *   {"v":1,"id":"<job id>","job":"<job name>","args":{…},"enqueuedAt":"<ISO-8601>","tenant":"<optional>",
 *    "track":true (optional), "parent":"<optional job id>"}
 * `id` is the dedupe key; a body without one falls back to the SQS MessageId. `track` asks the
 * worker to record the job's status in the job store; `parent` names the fan-out the job is a child of.
 * Message attributes repeat the job name and id so a consumer can route without parsing.
 */
export const ENVELOPE_VERSION = 1;

export const ATTR_JOB = 'sqsjobs-job';
export const ATTR_JOB_ID = 'sqsjobs-id';

/** Job ids are memcached keys and log fields: keep them short and printable. */
/** What a job id may be made of (1-128 of them). */
export const JOB_ID_PATTERN = /^[A-Za-z0-9_.:-]+$/;

export const jobIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(JOB_ID_PATTERN, 'may contain only letters, digits, _ . : -');

export const tenantSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters (SQS MessageGroupId limit)')
  .regex(/^[\x21-\x7e]+$/, 'may contain only printable ASCII without spaces (SQS MessageGroupId rule)');

export const envelopeSchema = z.object({
  v: z.literal(ENVELOPE_VERSION),
  id: jobIdSchema.optional(),
  job: z.string().min(1).max(80),
  args: z.unknown(),
  enqueuedAt: z.iso.datetime({ offset: true }).optional(),
  tenant: tenantSchema.optional(),
  track: z.boolean().optional(),
  parent: jobIdSchema.optional(),
});

export interface Envelope {
  readonly v: 1;
  readonly id: string;
  readonly job: string;
  readonly args: unknown;
  readonly enqueuedAt: string;
  readonly tenant?: string;
  /** Record this job's status in the job store (job status, progress). */
  readonly track?: boolean;
  /** The job id of the fan-out this job is a child of: its end is counted there. */
  readonly parent?: string;
}

export function newJobId(): string {
  return randomUUID();
}

export function encodeEnvelope(envelope: Envelope): string {
  const { v, id, job, args, enqueuedAt, tenant, track, parent } = envelope;
  return JSON.stringify({
    v,
    id,
    job,
    args,
    enqueuedAt,
    ...(tenant === undefined ? {} : { tenant }),
    ...(track ? { track: true } : {}),
    ...(parent === undefined ? {} : { parent }),
  });
}

/** Why a body is poison. Poison goes to the DLQ at once and is never retried. */
export type PoisonReason = 'invalid-json' | 'not-an-envelope' | 'unsupported-version' | 'unknown-job' | 'invalid-args';

export type Decoded =
  | { readonly ok: true; readonly envelope: Envelope }
  | { readonly ok: false; readonly reason: PoisonReason; readonly detail: string };

/**
 * Decode a body. Never throws: a body that is not a v1 envelope comes back with the reason.
 * `fallback` supplies the id (SQS MessageId) and enqueue time (SentTimestamp) when the body has none.
 */
export function decodeEnvelope(body: string, fallback: { messageId: string; sentAt: Date }): Decoded {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    return { ok: false, reason: 'invalid-json', detail: `body is not JSON: ${(error as Error).message}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, reason: 'not-an-envelope', detail: 'body is JSON but not an object' };
  }
  const version = (parsed as { v?: unknown }).v;
  if (version !== ENVELOPE_VERSION) {
    return {
      ok: false,
      reason: 'unsupported-version',
      detail: `envelope version ${JSON.stringify(version) ?? 'missing'} is not supported (expected ${ENVELOPE_VERSION})`,
    };
  }
  const result = envelopeSchema.safeParse(parsed);
  if (!result.success) {
    const detail = result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    return { ok: false, reason: 'not-an-envelope', detail };
  }
  const e = result.data;
  return {
    ok: true,
    envelope: {
      v: ENVELOPE_VERSION,
      id: e.id ?? fallback.messageId,
      job: e.job,
      args: e.args,
      enqueuedAt: e.enqueuedAt ?? fallback.sentAt.toISOString(),
      ...(e.tenant === undefined ? {} : { tenant: e.tenant }),
      ...(e.track ? { track: true } : {}),
      ...(e.parent === undefined ? {} : { parent: e.parent }),
    },
  };
}

/** SQS accepts only #x9 #xA #xD, #x20-#xD7FF, #xE000-#xFFFD and #x10000-#x10FFFF in bodies and attributes. */
const SQS_FORBIDDEN = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * The first string in `value` (walking objects and arrays) with a character SQS refuses, as
 * `{ path, codePoint }`; undefined when every string is acceptable. JSON escapes control
 * characters and lone surrogates, so only U+FFFE and U+FFFF can reach SQS raw.
 */
export function findForbiddenCharacter(value: unknown, path = 'args'): { path: string; codePoint: string } | undefined {
  if (typeof value === 'string') {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point (JSON escapes them)
    const match = SQS_FORBIDDEN.exec(value.replace(/[\u0000-\u001f]|[\uD800-\uDFFF]/gu, ''));
    return match === null ? undefined : { path, codePoint: `U+${match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findForbiddenCharacter(value[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const found = findForbiddenCharacter(key, `${path} key`) ?? findForbiddenCharacter(item, `${path}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

export interface StringAttribute {
  readonly DataType: 'String';
  readonly StringValue: string;
}

/** The message attributes sent with every job. */
export function envelopeAttributes(envelope: Envelope): Record<string, StringAttribute> {
  return {
    [ATTR_JOB]: { DataType: 'String', StringValue: envelope.job },
    [ATTR_JOB_ID]: { DataType: 'String', StringValue: envelope.id },
  };
}

/** Bytes SQS counts against its size limit: the body plus every attribute's name, type and value. */
export function messageSize(body: string, attributes: Record<string, StringAttribute>): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, attr] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(attr.DataType, 'utf8') + Buffer.byteLength(attr.StringValue, 'utf8');
  }
  return size;
}
