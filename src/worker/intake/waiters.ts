import type { Lease } from '../hold/lease.js';

/** What a message waiting for a pause to end is tagged with: tenant ids hold no space, so it never names a tenant. */
export const pauseTag = (key: string): string => `${PAUSE_TAG}${key}`;
const PAUSE_TAG = 'paused ';
/** Whether `tag` is a pause's (pauseTag). */
export const isPauseTag = (tag: string | undefined): boolean => tag?.startsWith(PAUSE_TAG) === true;

/**
 * Buffered messages waiting in the worker for a permit of their tenant (tagged with the tenant), a
 * pause to end (pauseTag), or their rate slot (untagged): kept here, not on the lease (a lease is
 * held per in-flight message, and most never wait). The scheduler keeps them in its buffers; this
 * says which they are.
 */
export class Waiters {
  readonly #tenantOf = new Map<Lease, string | undefined>();
  /** Messages that have waited here at least once. */
  readonly #waited = new WeakSet<Lease>();

  get any(): boolean {
    return this.#tenantOf.size > 0;
  }

  add(lease: Lease, tenant: string | undefined): void {
    this.#tenantOf.set(lease, tenant);
    this.#waited.add(lease);
  }

  /** It leaves the waiters (to start, or to go back). */
  delete(lease: Lease): void {
    this.#tenantOf.delete(lease);
  }

  has(lease: Lease): boolean {
    return this.#tenantOf.has(lease);
  }

  hasWaited(lease: Lease): boolean {
    return this.#waited.has(lease);
  }

  clear(): void {
    this.#tenantOf.clear();
  }

  /** Waiting messages not lost, of those `match` picks (default: all). */
  count(match?: (lease: Lease, tenant: string | undefined) => boolean): number {
    if (this.#tenantOf.size === 0) return 0; // the common case, asked on every grant
    let n = 0;
    for (const [l, tenant] of this.#tenantOf) if (!l.lost && (match === undefined || match(l, tenant))) n++;
    return n;
  }

  /** Wake every message waiting for a pause that `ended` says is over (its scope key): true when one woke. */
  resumed(ended: (key: string) => boolean): boolean {
    let woke = false;
    for (const [l, tag] of this.#tenantOf) {
      if (tag === undefined || !tag.startsWith(PAUSE_TAG) || l.notBefore === 0) continue;
      if (!ended(tag.slice(PAUSE_TAG.length))) continue;
      l.notBefore = 0;
      woke = true;
    }
    return woke;
  }

  /**
   * A permit of `tenant` was given back: the message that has waited for one longest (of those not
   * woken already and not lost) may start now. False when none waits.
   */
  permitFreed(tenant: string): boolean {
    let first: Lease | undefined;
    for (const [l, whose] of this.#tenantOf)
      if (whose === tenant && l.notBefore !== 0 && !l.lost && (first === undefined || l.receivedAt < first.receivedAt)) first = l;
    if (first === undefined) return false;
    first.notBefore = 0;
    return true;
  }
}
