/**
 * The tick rota: which worker reads a shard of the schedules' due index in a given second. One of
 * the workers that have the same jobs does, so an idle fleet's reads do not grow with its size
 * (SCHEDULE_SHARDS a second for each set of jobs); workers with other jobs (another app, another
 * version) take turns of their own, and so fire the schedules of their jobs. It only saves reads:
 * the store's conditional writes decide what fires, so two workers that both read a shard (the
 * rota unreachable, or none configured) fire nothing twice.
 */
export interface TickRota {
  /**
   * Whether this worker reads `shard` in the second `second` (epoch seconds): true for one asker of
   * each `jobs` (a name for the set of jobs the asker has). Never rejects; true when it cannot tell.
   */
  mine(jobs: string, shard: number, second: number): Promise<boolean>;
}

/** Without a shared store every worker reads every shard each second (it costs reads, not correctness). */
export const EVERY_WORKER: TickRota = { mine: async () => true };
