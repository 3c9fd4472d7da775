#!/usr/bin/env node
import { run } from './program.js';

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
