#!/usr/bin/env node
import { run } from './program.js';

// On Node 20 the AWS SDK prints an 8-line NodeVersionSupportWarning on every call; one line says it.
if (Number(process.versions.node.split('.')[0]) < 22 && process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED === undefined) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.stderr.write(
    `sqs-jobs: Node ${process.versions.node} is past its end of life; AWS SDK releases after the first week of January 2027 need Node >= 22\n`,
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
