/**
 * Calls counted on the SDK clients themselves: a middleware in the `deserialize` step, which runs
 * once per attempt (inside the SDK's retry loop), so a retried call counts each time it went out.
 */
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';

/** Calls by operation (SendMessage, ReceiveMessage, Publish, …) and the ones that failed. */
export class CallTally {
  #counts = new Map<string, number>();
  #failed = 0;

  add(operation: string): void {
    this.#counts.set(operation, (this.#counts.get(operation) ?? 0) + 1);
  }

  fail(): void {
    this.#failed++;
  }

  get failed(): number {
    return this.#failed;
  }

  total(): number {
    let n = 0;
    for (const c of this.#counts.values()) n += c;
    return n;
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.#counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  reset(): void {
    this.#counts = new Map();
    this.#failed = 0;
  }
}

const NAME = 'benchEventsCallCounter';

function counter(tally: CallTally) {
  return <A, R>(next: (args: A) => Promise<R>, context: { commandName?: string }) =>
    async (args: A): Promise<R> => {
      tally.add((context.commandName ?? 'Unknown').replace(/Command$/, ''));
      try {
        return await next(args);
      } catch (error) {
        tally.fail();
        throw error;
      }
    };
}

/** Count every call this SQS client makes into `tally`. */
export function countSqs(client: SQSClient, tally: CallTally): SQSClient {
  client.middlewareStack.add(counter(tally), { step: 'deserialize', name: NAME });
  return client;
}

/** Count every call this SNS client makes into `tally`. */
export function countSns(client: SNSClient, tally: CallTally): SNSClient {
  client.middlewareStack.add(counter(tally), { step: 'deserialize', name: NAME });
  return client;
}
