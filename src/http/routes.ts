/**
 * The HTTP API's method table: what a path names and which methods are served there, written once
 * for the routing, the 405s and their `Allow`, and OPTIONS. It follows the OpenAPI document the
 * API serves (openapi.ts), which matches a concrete path before a templated one.
 */

/** What a path names: the document, a `jobs/` segment (an offered job's name or a job id), or nothing. */
type Place = 'openapi.json' | { readonly segment: string } | undefined;

/** What the API offers, as far as routing is concerned. */
export interface Offer {
  readonly basePath: string;
  /** Whether `name` is a job offered here (POST at its name enqueues it). */
  isJob(name: string): boolean;
  /** Whether job status is kept (a job store): GET at a job id. */
  readonly statusKept: boolean;
  /** Whether cancels can be made: DELETE at a job id. */
  readonly cancellable: boolean;
}

export function placeOf(offer: Offer, pathname: string): Place {
  if (pathname === `${offer.basePath}/openapi.json`) return 'openapi.json';
  const prefix = `${offer.basePath}/jobs/`;
  const segment = pathname.startsWith(prefix) ? decodeSegment(pathname.slice(prefix.length)) : undefined;
  return segment === undefined ? undefined : { segment };
}

/**
 * The methods served at a place (HEAD wherever GET is): GET at the document; POST at an offered
 * job's name and nothing else there (its concrete path comes before `{jobId}`); GET at any other
 * segment when status is kept, and DELETE when cancels can be made. None where nothing is served.
 */
export function servedAt(offer: Offer, place: Place): readonly string[] {
  if (place === undefined) return [];
  if (place === 'openapi.json') return ['GET', 'HEAD'];
  if (offer.isJob(place.segment)) return ['POST'];
  if (!offer.statusKept) return [];
  return offer.cancellable ? ['GET', 'HEAD', 'DELETE'] : ['GET', 'HEAD'];
}

/** `Allow` for the methods served: OPTIONS is answered (204) wherever something is served. */
export function allowHeader(served: readonly string[]): string {
  return [...served, 'OPTIONS'].join(', ');
}

/** One path segment, percent-decoded; undefined when it is empty, nested, or badly encoded. */
function decodeSegment(raw: string): string | undefined {
  if (raw === '' || raw.includes('/')) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
