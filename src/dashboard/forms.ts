import { type DeadLetterFilter, deadLetterFilterSchema, FILTER_FIELDS } from '../ops/dlq-filter.js';
import { FILTER_PARAMS } from './pages/dead-letters.js';

/** Forms over this many bytes are refused. */
export const MAX_FORM_BYTES = 16_384;

/** The dead-letter filter in URL parameters or form fields; the error names the parameter and the rule. */
export function parseFilter(params: URLSearchParams): { filter: DeadLetterFilter } | { error: string } {
  const raw: Record<string, string | number> = {};
  for (const k of FILTER_FIELDS) {
    const v = params.get(FILTER_PARAMS[k]);
    if (v === null || v.trim() === '') continue;
    raw[k] = k.endsWith('Seconds') ? (/^\d+$/.test(v.trim()) ? Number(v) : Number.NaN) : v;
  }
  const parsed = deadLetterFilterSchema.safeParse(raw);
  if (parsed.success) return { filter: parsed.data };
  const issue = parsed.error.issues[0]!;
  const param = FILTER_PARAMS[issue.path[0] as (typeof FILTER_FIELDS)[number]] ?? String(issue.path[0]);
  return { error: `${param}: ${issue.code === 'invalid_type' ? 'must be a whole number of seconds' : issue.message}` };
}

/** A url-encoded form body, or undefined when it is over MAX_FORM_BYTES (read no further than that). */
export async function readForm(request: Request): Promise<URLSearchParams | undefined> {
  const length = Number(request.headers.get('content-length') ?? 0);
  if (length > MAX_FORM_BYTES) return undefined;
  if (request.body === null) return new URLSearchParams();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_FORM_BYTES) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
