/*
 * What a job id's lock key holds (the JobLock protocol, src/ports/lock.ts), written the same way by
 * MemcachedLock and MemoryLock:
 *   running:<token>[:<origin message id>]  claimed by `token`, the job running
 *   leaving:<token>[:<origin message id>]  the same claim, its message on its way to the DLQ
 *   done:<token>                           completed
 *   cancelled:<ISO time>                   cancelled
 * Tokens never hold a `:` (base64url and `.`), nor do SQS message ids.
 */
const RUNNING = 'running:';
export const LEAVING = 'leaving:';
export const DONE = 'done:';
export const CANCELLED = 'cancelled:';

/** The value a claim by `token` for the message `origin` writes. */
export const runningValue = (token: string, origin: string | undefined): string =>
  origin === undefined ? RUNNING + token : `${RUNNING}${token}:${origin}`;

const written = (value: string, state: string, token: string) => value === state + token || value.startsWith(`${state}${token}:`);

/** Claimed by `token` and running (extend and leave act only on this). */
export const runningUnder = (value: string, token: string): boolean => written(value, RUNNING, token);

/** Claimed by `token`, running or leaving (release deletes either). */
export const heldBy = (value: string, token: string): boolean => written(value, RUNNING, token) || written(value, LEAVING, token);

/** The origin message id a running or leaving value names; undefined when its claim did not say (older versions). */
export function holderOf(value: string): string | undefined {
  const rest = value.slice(value.indexOf(':') + 1);
  const colon = rest.indexOf(':');
  return colon === -1 ? undefined : rest.slice(colon + 1);
}

/** The token of the claim a running or leaving value holds; undefined for any other value. */
export function claimTokenOf(value: string): string | undefined {
  const state = value.startsWith(RUNNING) ? RUNNING : value.startsWith(LEAVING) ? LEAVING : undefined;
  if (state === undefined) return undefined;
  const rest = value.slice(state.length);
  const colon = rest.indexOf(':');
  return colon === -1 ? rest : rest.slice(0, colon);
}

/** `running:` turned into `leaving:`, the rest kept. */
export const leavingValue = (running: string): string => LEAVING + running.slice(RUNNING.length);
