/**
 * 3. Cold load. Each entry (entry-sqs-jobs.ts, entry-powertools.ts) is bundled with esbuild as the
 * SqsJobs construct bundles a function (src/cdk/lambda-workers.ts: ESM, node22, minified, every
 * module in, the createRequire banner), into .local/bench-lambda/bundles/. Then, in fresh `node`
 * processes, alternating (so that the machine's load falls on both alike): the bundle's import
 * (the handler made at module load, as Lambda's init does) and its first invocation with one new
 * no-op record, against the same servers, timed inside the process from before the import to the
 * answer (node's own start, the same for both, is left out). The first invocation holds each side's
 * first connections and first calls (sqs-jobs also reads its queue's DLQ then: GetQueueAttributes).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { noopEvent } from './events.js';

export type Side = 'sqsJobs' | 'powertools';
const ENTRY: Record<Side, string> = { sqsJobs: 'bench/lambda/entry-sqs-jobs.ts', powertools: 'bench/lambda/entry-powertools.ts' };
const OUT = '.local/bench-lambda/bundles';
/** As src/cdk/lambda-workers.ts: ESM output still meets CommonJS dependencies that call require(). */
const BANNER = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);";

export interface Bundle {
  readonly file: string;
  readonly bytes: number;
  /** The largest parts of the bundle, by package (sqs-jobs' own code as `sqs-jobs src/`), bytes in the output. */
  readonly largest: { readonly part: string; readonly bytes: number }[];
  /** zod's bytes in it: sqs-jobs' peer dependency, and the schema both sides check the args with (jobs.ts). */
  readonly zod: number;
}

const partOf = (input: string): string => {
  const nm = input.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const [a, b] = input.slice(nm + 'node_modules/'.length).split('/');
    return a!.startsWith('@') ? `${a}/${b}` : a!;
  }
  return input.startsWith('src/') ? 'sqs-jobs src/' : input;
};

async function bundle(side: Side): Promise<Bundle> {
  mkdirSync(OUT, { recursive: true });
  const file = `${OUT}/${side}.mjs`;
  const r = await build({
    entryPoints: [ENTRY[side]],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    banner: { js: BANNER },
    metafile: true,
    logLevel: 'error',
  });
  const parts = new Map<string, number>();
  const inputs: Metafile['outputs'][string]['inputs'] = r.metafile.outputs[file]!.inputs;
  for (const [input, { bytesInOutput }] of Object.entries(inputs))
    parts.set(partOf(input), (parts.get(partOf(input)) ?? 0) + bytesInOutput);
  const largest = [...parts].sort((a, b) => b[1] - a[1]).slice(0, 8);
  return { file, bytes: statSync(file).size, largest: largest.map(([part, bytes]) => ({ part, bytes })), zod: parts.get('zod') ?? 0 };
}

/** The child: import the bundle, invoke it once, print the times (ms) and how many records it answered failed. */
const CHILD = `
const t0 = performance.now();
const { handler } = await import(process.env.BENCH_LAMBDA_BUNDLE);
const loaded = performance.now();
const deadline = Date.now() + 30000;
const context = { functionName: 'bench-lambda', awsRequestId: 'cold', getRemainingTimeInMillis: () => deadline - Date.now() };
const answer = await handler(JSON.parse(process.env.BENCH_LAMBDA_EVENT), context);
const t1 = performance.now();
process.stdout.write(JSON.stringify({ importMs: loaded - t0, firstMs: t1 - loaded, failed: answer.batchItemFailures.length }));
process.exit(0); // the clients' kept sockets
`;

export interface ColdRun {
  readonly importMs: number;
  readonly firstMs: number;
  readonly failed: number;
}

function child(bundleFile: string, env: Record<string, string>): Promise<ColdRun> {
  const { NODE_OPTIONS: _, ...inherited } = process.env;
  return new Promise((done, fail) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', CHILD],
      { env: { ...inherited, ...env, BENCH_LAMBDA_BUNDLE: pathToFileURL(resolve(bundleFile)).href }, timeout: 60_000 },
      (error, stdout, stderr) => (error ? fail(new Error(`${error.message}\n${stderr}`)) : done(JSON.parse(stdout) as ColdRun)),
    ),
  );
}

export interface ColdResult {
  readonly bundles: Record<Side, Bundle>;
  readonly runs: Record<Side, ColdRun[]>;
}

export async function measureCold(
  o: { processes: number; queueUrl: string; env: Record<string, string> },
  say: (line: string) => void,
): Promise<ColdResult> {
  const bundles = { sqsJobs: await bundle('sqsJobs'), powertools: await bundle('powertools') };
  say(`   bundles: sqs-jobs ${bundles.sqsJobs.bytes} B, Powertools ${bundles.powertools.bytes} B`);
  const runs: Record<Side, ColdRun[]> = { sqsJobs: [], powertools: [] };
  for (let i = 0; i < o.processes; i++) {
    const order: Side[] = i % 2 === 0 ? ['sqsJobs', 'powertools'] : ['powertools', 'sqsJobs'];
    for (const side of order)
      runs[side].push(await child(bundles[side].file, { ...o.env, BENCH_LAMBDA_EVENT: JSON.stringify(noopEvent(o.queueUrl, 1)) }));
  }
  return { bundles, runs };
}
