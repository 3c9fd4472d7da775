import type { Env } from '../config/env.js';
import type { LambdaHandler } from './event.js';
import type { LambdaHandlerOptions } from './options.js';
import { LambdaRuntime } from './runtime.js';

/**
 * An SQS event handler for Lambda that runs `jobs` as a worker does: each record read, claimed,
 * run, retried with backoff or dead-lettered with its reason, and the answer a partial batch
 * response (turn on ReportBatchItemFailures in the mapping). Made once per container, at module
 * load: `export const handler = createLambdaHandler({ jobs })`. Refuses options that do not apply
 * on Lambda, and tenant caps or rate limits without memcached, with the reason. `on(event, ...)`
 * hears the worker's events; `close()` lets go of its clients (a test or a local script; never on Lambda).
 */
export function createLambdaHandler(
  options: LambdaHandlerOptions,
  env: Env = process.env,
): LambdaHandler & Pick<LambdaRuntime, 'on' | 'off' | 'once' | 'close'> {
  const runtime = new LambdaRuntime(options, env);
  const handler: LambdaHandler = (event, context) => runtime.invoke(event, context);
  return Object.assign(handler, {
    on: runtime.on.bind(runtime),
    off: runtime.off.bind(runtime),
    once: runtime.once.bind(runtime),
    close: () => runtime.close(),
  });
}
