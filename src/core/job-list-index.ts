/**
 * The job store table's three list indexes, where `sqs-jobs jobs list` and the dashboard's Jobs
 * page find tracked jobs by state, job, tenant and time: one definition for the DynamoDB adapter
 * (src/adapters/dynamodb-table.ts and the CDK construct make them; dynamodb-job-list.ts reads them).
 * All sort on `lsAt` (a string: the state change's epoch milliseconds, 13 digits, `#`, the job id:
 * unique, and in time order); each partition holds one state of one shard:
 * - `jobs-by-state`, partition `lsState` = `<state>#<shard>`: every tracked record;
 * - `jobs-by-job`, partition `lsJob` = `<jobName>#<state>#<shard>`: every tracked record;
 * - `jobs-by-tenant`, partition `lsTenant` = `<tenant>#<state>#<shard>`: records with a tenant (sparse).
 * A query is served by the key of one of them, so its pages come full; tenant and job together
 * read the tenant's and filter on the job name (a fourth index would cost every state change
 * ~2 WCU more for that one combination: docs/guide/status-and-fan-out.md).
 * The shard (0..LIST_SHARDS-1, from the job id) spreads one state's writes over partitions.
 * Projected: what a list row shows (LIST_PROJECTED; the job id is in `lsAt`), so an entry stays
 * well under 1 KB, a page reads no record twice, and a progress write (which changes none of them)
 * costs the indexes nothing.
 */
export const LIST_INDEXES = {
  byState: { name: 'jobs-by-state', partitionKey: 'lsState', sortKey: 'lsAt' },
  byJob: { name: 'jobs-by-job', partitionKey: 'lsJob', sortKey: 'lsAt' },
  byTenant: { name: 'jobs-by-tenant', partitionKey: 'lsTenant', sortKey: 'lsAt' },
} as const;

/** One of LIST_INDEXES. */
export type ListIndex = (typeof LIST_INDEXES)[keyof typeof LIST_INDEXES];

/** Shards of each state's partitions: a page reads one partition per shard and merges them. */
export const LIST_SHARDS = 4;

/** The attribute holding what a row says (a failure's reason and error, a cancel's reason), one line, at most LIST_SAID_CHARS. */
export const LIST_SAID = 'lsSaid';

/** The longest `lsSaid`. */
export const LIST_SAID_CHARS = 160;

/** The record attributes the list indexes carry besides their keys (what a row shows, and what a page filters on). */
export const LIST_PROJECTED: readonly string[] = ['jobName', 'tenant', 'state', 'attempt', LIST_SAID];
