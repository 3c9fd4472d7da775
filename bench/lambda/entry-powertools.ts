/**
 * Powertools' handler as a function's entry, for cold.ts to bundle: what main.ts measures warm,
 * made at module load as Lambda runs it; Powertools makes its DynamoDB client from clientConfig.
 */
import { CREDENTIALS } from './jobs.js';
import { powertoolsHandler } from './powertools-side.js';

const env = process.env;
export const handler = powertoolsHandler({
  table: env.BENCH_LAMBDA_IDEMPOTENCY_TABLE!,
  clientConfig: { endpoint: env.BENCH_LAMBDA_DYNAMODB!, region: 'us-east-1', credentials: CREDENTIALS },
});
