/**
 * Where a contender's CPU went, from a V8 .cpuprofile (node --cpu-prof): self time per bucket,
 * by the file each sampled function lives in. The buckets are the ones issue 22 measured: the AWS
 * SDK, the memcached client, sqs-jobs' own code by part, zod, pino, Node's internals, GC.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The bucket a function's self time goes to, from its file (and, for V8's own entries, its name). */
export function bucketOf(url: string, functionName: string): string | undefined {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)' || functionName === '(program)') return undefined; // not the process's work
    if (functionName === 'writeBuffer' || functionName === 'writev' || functionName === 'writeUtf8String') return 'socket writes (native)';
    if (functionName === 'runMicrotasks') return 'promise reactions (runMicrotasks)';
    return 'V8 / native, other';
  }
  if (url.includes('/@aws-sdk/') || url.includes('/@smithy/') || url.includes('/@aws-crypto/')) return 'AWS SDK';
  if (url.includes('/memjs/') || /\/src\/adapters\/memcached-(?:client|server|wire)\./.test(url)) return 'memcached client';
  if (url.includes('/zod/')) return 'zod';
  if (url.includes('/pino')) return 'pino';
  if (url.includes('/node_modules/')) return 'other packages';
  const own = /\/(?:dist\/)?src\/([^/]+)\//.exec(url);
  if (own !== null) return `sqs-jobs ${own[1]}/`;
  if (url.includes('/bench/')) return 'the bench itself';
  if (url.startsWith('node:')) return 'Node internals';
  return 'other';
}

/** Self time per bucket, in microseconds, over the whole profile. */
export function cpuBuckets(file: string): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const buckets = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (node === undefined) return;
    const bucket = bucketOf(node.callFrame.url, node.callFrame.functionName);
    if (bucket === undefined) return;
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return buckets;
}

/** The V8 profiler through the inspector, started now (100 µs samples); save() stops it and writes the profile to `file`. */
export async function startProfiler(file: () => string): Promise<{ save: () => Promise<string> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  return {
    save: async () => {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      const path = file();
      writeFileSync(path, JSON.stringify(profile));
      session.disconnect();
      return path;
    },
  };
}

/** One column of a bucket table: a label, its summed buckets (µs), and the count to divide them by. */
export interface ProfileColumn {
  readonly label: string;
  readonly buckets: ReadonlyMap<string, number>;
  readonly per: number;
}

/** A markdown table of CPU µs per unit by bucket, one column per profile, rows by the first column's cost. */
export function bucketTable(title: string, columns: readonly ProfileColumn[]): string[] {
  const first = columns[0]?.buckets ?? new Map<string, number>();
  const buckets = [...new Set(columns.flatMap((c) => [...c.buckets.keys()]))].sort((a, b) => (first.get(b) ?? 0) - (first.get(a) ?? 0));
  const cell = (c: ProfileColumn, b: string) => ((c.buckets.get(b) ?? 0) / c.per).toFixed(1);
  const all = (c: ProfileColumn) => ([...c.buckets.values()].reduce((a, b) => a + b, 0) / c.per).toFixed(1);
  return [
    `| ${title} | ${columns.map((c) => c.label).join(' | ')} |`,
    `|---|${columns.map(() => '---|').join('')}`,
    ...buckets.map((b) => `| ${b} | ${columns.map((c) => cell(c, b)).join(' | ')} |`),
    `| all | ${columns.map(all).join(' | ')} |`,
  ];
}
