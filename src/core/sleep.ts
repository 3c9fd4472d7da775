/** Resolve after `ms`, or as soon as `signal` aborts; the timer never outlives it. Never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** `call`'s answer, or `timedOut` once `ms` have passed first (its answer then comes to nothing). The timer never holds the process open. */
export async function within<T, U>(call: Promise<T>, ms: number, timedOut: U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<U>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), ms);
    timer.unref();
  });
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}
