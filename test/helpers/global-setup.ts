import type { TestProject } from 'vitest/node';
import { tcpAnswers } from './net.js';

/** The check that tells each server apart: LocalStack's health document, moto's own API. */
const HEALTH = {
  localstack: { path: '/_localstack/health', expect: /"sqs":\s*"(available|running)"/ },
  moto: { path: '/moto-api/config', expect: /"batch"/ }, // not data.json: megabytes once tests have run
} as const;

async function answers(url: string, expect: RegExp): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return res.ok && expect.test(await res.text());
  } catch {
    return false;
  }
}

/**
 * Integration tests need their project's server and memcached; say which is missing and how to
 * start it instead of failing test by test (or, worse, passing against the wrong server).
 */
export default async function setup(project: TestProject): Promise<void> {
  const env = project.config.env;
  const stack = (env.SQS_JOBS_TEST_STACK ?? 'localstack') as keyof typeof HEALTH;
  const endpoint = env.AWS_ENDPOINT_URL ?? 'http://127.0.0.1:4566';
  const memcached = env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11211';
  const [host, port] = memcached.split(':');
  const check = HEALTH[stack];
  const problems: string[] = [];
  if (!(await answers(`${endpoint}${check.path}`, check.expect))) {
    const other = stack === 'localstack' ? 'moto' : 'localstack';
    const impostor = await answers(`${endpoint}${HEALTH[other].path}`, HEALTH[other].expect);
    problems.push(
      `${stack} does not answer at ${endpoint}${check.path}${impostor ? ` (${other} does: moto now has its own port, 4567 by default)` : ''}`,
    );
  }
  if (!(await tcpAnswers(host!, Number(port)))) problems.push(`memcached does not answer at ${memcached}`);
  const dynamodb = new URL(env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://127.0.0.1:4569');
  if (!(await tcpAnswers(dynamodb.hostname, Number(dynamodb.port)))) {
    problems.push(`DynamoDB Local (the job store) does not answer at ${dynamodb.origin}: bash infra/local/dynamodb.sh up`);
  }
  if (problems.length > 0) {
    throw new Error(
      `${project.name}: ${problems.join('; ')}. Run \`npm test\` (which starts what is missing) or \`bash infra/local/stack.sh up ${stack} memcached\` first`,
    );
  }
}
