#!/usr/bin/env node
import { SqsJobsError } from '../errors.js';
import { enqueueCommand, queuesCreate, worker } from './commands.js';
import { dlq, stats } from './ops-commands.js';

const USAGE = `sqs-jobs — background jobs on Amazon SQS

  sqs-jobs queues create --name <queue> [--max-receive-count 5] [--visibility-timeout 30] [--json]
  sqs-jobs worker --jobs <module or folder> [--queue <url>[@weight]]... [--concurrency 10]
                  [--prefetch 10] [--visibility-timeout 30] [--wait-time 20]
                  [--shutdown-timeout-ms 30000] [--memcached host:port] [--lock-fail-closed]
  sqs-jobs enqueue <job> --jobs <module> [--args JSON] [--job-id ID] [--tenant T] [--delay S] [--queue URL]
  sqs-jobs stats [--queue URL]... [--window 15] [--namespace SqsJobs] [--watch [--every 5]] [--json]
  sqs-jobs dlq list [--queue URL | --dlq URL] [--limit 100] [--json]
  sqs-jobs dlq replay [--queue URL | --dlq URL] [--job NAME] [--id ID] [--limit N] [--dry-run] [--json]
  sqs-jobs dlq purge [--queue URL | --dlq URL] --yes

Every command takes --endpoint URL and --region R. Environment: SQS_JOBS_QUEUE_URL, AWS_ENDPOINT_URL
(or SQS_JOBS_ENDPOINT), AWS_REGION, SQS_JOBS_MEMCACHED, SQS_JOBS_LOG_LEVEL.`;

async function main(argv: string[]): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  // Ctrl-C ends a watch or stops a replay between batches; a second one exits at once.
  const interrupt = new AbortController();
  const onSignal = () => (interrupt.signal.aborted ? process.exit(130) : interrupt.abort());
  const [command, sub, ...rest] = argv;
  if (command === 'stats' || command === 'dlq') {
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  }
  if (command === 'queues' && sub === 'create') await queuesCreate(rest, out);
  else if (command === 'stats') await stats(argv.slice(1), out, interrupt.signal);
  else if (command === 'dlq') await dlq(argv.slice(1), out, interrupt.signal);
  else if (command === 'worker') await worker(argv.slice(1));
  else if (command === 'enqueue') await enqueueCommand(argv.slice(1), out);
  else {
    const asked = command === undefined || command === 'help' || command === '--help' || command === '-h';
    (asked ? process.stdout : process.stderr).write(`${USAGE}\n`);
    return asked ? 0 : 2;
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof SqsJobsError) process.stderr.write(`sqs-jobs: ${error.code}: ${error.message}\n`);
    else if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) process.stderr.write(`sqs-jobs: ${error.message}\n${USAGE}\n`);
    else process.stderr.write(`sqs-jobs: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
