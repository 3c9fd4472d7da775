import type { JobArgs, AnyDefinition } from '../core/job.js';
import { Producer } from './producer.js';
import type { EnqueueManyOptions, EnqueueOptions, EnqueueResult, ProducerOptions } from './options.js';

/* The module-level enqueue()/enqueueMany(): one producer per process, configured from the environment on first use. */

let defaultProducer: Producer | undefined;

/** Configure the producer behind the module-level enqueue()/enqueueMany(). */
export function configureDefaultProducer(options: ProducerOptions): Producer {
  defaultProducer?.close();
  defaultProducer = new Producer(options);
  return defaultProducer;
}

function getDefaultProducer(): Producer {
  defaultProducer ??= new Producer({});
  return defaultProducer;
}

/** Enqueue with the default producer, configured from the environment on first use. */
export function enqueue<J extends AnyDefinition>(job: J | string, args: JobArgs<J>, options?: EnqueueOptions): Promise<EnqueueResult> {
  return getDefaultProducer().enqueue(job, args, options);
}

/** enqueueMany with the default producer, configured from the environment on first use. */
export function enqueueMany<J extends AnyDefinition>(
  job: J | string,
  argsList: readonly JobArgs<J>[],
  options?: EnqueueManyOptions,
): Promise<EnqueueResult[]> {
  return getDefaultProducer().enqueueMany(job, argsList, options);
}
