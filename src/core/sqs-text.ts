/* What SQS accepts in a message's text, and how it counts a message's size: one place for the producer's checks. */
import type { MessageAttributes } from './message.js';

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

/** Bytes SQS counts against its size limit: the body plus every attribute's name, type and value. */
export function messageSize(body: string, attributes: MessageAttributes): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, attr] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(attr.DataType, 'utf8');
    size += attr.StringValue === undefined ? (attr.BinaryValue?.byteLength ?? 0) : Buffer.byteLength(attr.StringValue, 'utf8');
  }
  return size;
}
