/** Reading a request's JSON body within a byte limit, never more of it than the limit. */

type BodyReading =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly status: 400 | 413 | 415; readonly slug: string; readonly detail: string };

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json(?:\s*;|$)/i;

/**
 * The body as JSON: an absent or empty body reads as `{}` (a job whose args are all optional);
 * anything else must say `application/json` (or a `+json` type), be UTF-8 and parse. Reading stops
 * as soon as it passes `limitBytes`.
 */
export async function readJsonBody(request: Request, limitBytes: number): Promise<BodyReading> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limitBytes) return tooLarge(declared, limitBytes);
  const bytes = await readUpTo(request, limitBytes);
  if (bytes === 'too-large') return tooLarge(undefined, limitBytes);
  if (bytes.length === 0) return { ok: true, value: {} };
  const type = request.headers.get('content-type') ?? '';
  if (!JSON_TYPE.test(type)) {
    return {
      ok: false,
      status: 415,
      slug: 'unsupported-media-type',
      detail: `the body must be JSON with content-type application/json (got ${type === '' ? 'none' : JSON.stringify(type)})`,
    };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, status: 400, slug: 'body-invalid', detail: 'the body is not valid UTF-8' };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, status: 400, slug: 'body-invalid', detail: `the body is not valid JSON: ${(error as Error).message}` };
  }
}

function tooLarge(size: number | undefined, limit: number): BodyReading {
  const what = size === undefined ? 'over' : `${size} bytes, over`;
  return {
    ok: false,
    status: 413,
    slug: 'payload-too-large',
    detail: `the body is ${what} the limit of ${limit} bytes: jobs carry references, not payloads (store the data elsewhere and send its key)`,
  };
}

async function readUpTo(request: Request, limitBytes: number): Promise<Uint8Array | 'too-large'> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      // Not cancelled: on Node that would destroy the socket before the answer is written. The
      // adapters close the connection after answering a request whose body was not read whole.
      reader.releaseLock();
      return 'too-large';
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return all;
}
