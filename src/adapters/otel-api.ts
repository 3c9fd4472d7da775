import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';

/** The OpenTelemetry API, as sqs-jobs uses it (types only: the module is loaded at run time, when installed). */
export type OtelApi = typeof Api;

let loaded: OtelApi | null | undefined;

/**
 * `@opentelemetry/api` when the app has it installed (an optional peer dependency), else
 * undefined. Loaded once, synchronously (the API ships CommonJS; its global state is shared with
 * an ESM copy), so enqueue() never waits for it and a module without it pays one check.
 */
export function otelApi(): OtelApi | undefined {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
    } catch (error) {
      loaded = null;
      // Not installed: the usual case, said nothing of. Installed but broken: tracing is off, and said so once.
      if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') {
        process.emitWarning(`sqs-jobs: @opentelemetry/api could not be loaded, tracing is off: ${(error as Error).message}`);
      }
    }
  }
  return loaded ?? undefined;
}
