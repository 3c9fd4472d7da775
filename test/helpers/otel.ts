import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/**
 * The real OpenTelemetry SDK for a test file: a BasicTracerProvider exporting to memory, and the
 * AsyncLocalStorage context manager, registered globally for the file and reset before each test.
 */
export function useOtel() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  beforeEach(() => exporter.reset());
  const spans = () => exporter.getFinishedSpans();
  return {
    exporter,
    tracer: provider.getTracer('test'),
    spans,
    /** Finished spans named `name`. */
    named: (name: string) => spans().filter((s) => s.name === name),
    /** Finished spans of job id `jobId` (its attribute), named `prefix...`. */
    ofJob: (prefix: string, jobId: string): ReadableSpan[] =>
      spans().filter((s) => s.name.startsWith(prefix) && s.attributes['sqs_jobs.job.id'] === jobId),
  };
}
