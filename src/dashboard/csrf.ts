import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * CSRF protection for the dashboard's actions (double submit): every page sets a random token in
 * a cookie only this site's pages send (SameSite=Strict, HttpOnly) and puts the same token in its
 * forms; an action is done only when the form's token equals the cookie's, and, when the browser
 * says where the request comes from (Origin), only from this host. Another site can make a browser
 * post a form here, but cannot read or set the cookie, so it cannot know the token.
 */

const COOKIE = 'sqsjobs_csrf';
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function cookieToken(request: Request): string | undefined {
  const header = request.headers.get('cookie') ?? '';
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) {
      const value = rest.join('=');
      return TOKEN.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/** The token for this request's forms, and the Set-Cookie header when the browser has none yet. */
export function csrfToken(request: Request, cookiePath: string): { token: string; setCookie?: string } {
  const token = cookieToken(request);
  if (token !== undefined) return { token };
  const fresh = randomBytes(32).toString('base64url');
  return { token: fresh, setCookie: `${COOKIE}=${fresh}; Path=${cookiePath}; HttpOnly; SameSite=Strict` };
}

/** Whether a form post carries the cookie's token and, when it says, comes from this host. */
export function csrfValid(request: Request, form: URLSearchParams): boolean {
  const origin = request.headers.get('origin');
  if (origin !== null) {
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      return false;
    }
    if (host !== new URL(request.url).host && host !== request.headers.get('host')) return false;
  }
  const expected = cookieToken(request);
  const given = form.get('csrf') ?? '';
  if (expected === undefined || !TOKEN.test(given)) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}
