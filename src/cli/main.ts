#!/usr/bin/env node
import { run } from './program.js';

// On a Node older than package.json's engines (22.12) the AWS SDK prints an 8-line warning on every
// call; one line says it instead, once, on stderr, as the process exits: after any error line
// (`sqs-jobs: CODE: ...`, which scripts read first), never before it.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if ((major < 22 || (major === 22 && minor < 12)) && process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED === undefined) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.once('exit', () =>
    process.stderr.write(
      `sqs-jobs: notice: Node ${process.versions.node} is not supported: sqs-jobs needs Node >= 22.12 ` +
        '(AWS SDK releases after the first week of January 2027 need Node >= 22); run it on Node 22, 24 or 26\n',
    ),
  );
}

// Ctrl-C ends `stats --watch` and `dashboard`, or stops `dlq replay` between batches; a second one exits at once.
// (The worker handles its own signals.)
const interrupt = new AbortController();
const argv = process.argv.slice(2);
if (argv[0] === 'stats' || argv[0] === 'dlq' || argv[0] === 'dashboard') {
  const onSignal = () => (interrupt.signal.aborted ? process.exit(130) : interrupt.abort());
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
}

const code = await run(argv, {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  signal: interrupt.signal,
});
process.exit(code);
