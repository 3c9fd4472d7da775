/**
 * HTML made only by the `html` tag: every value put into it is escaped unless it is itself Html,
 * so text from a message (args, error text, job names, tenants: whatever a producer sent) can only
 * ever be text on the page.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/**
 * Characters that change how the text around them reads (bidirectional overrides and isolates,
 * zero-width characters): shown as their code point, so a job name cannot pose as another.
 */
const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/gu;

export function escapeHtml(value: string): string {
  return value
    .replace(/[&<>"'`]/g, (c) => ENTITIES[c]!)
    .replace(INVISIBLE, (c) =>
      `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`.replace(/[<>]/g, (x) => ENTITIES[x]!),
    );
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** The tag: `html\`<td>${name}</td>\`` escapes `name`; Html values and arrays of them go in as they are. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** A query string from the fields set (undefined and empty ones left out), with the leading `?` when any. */
export function query(fields: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}
