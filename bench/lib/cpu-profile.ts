/**
 * Where a contender's CPU went, from a V8 .cpuprofile (node --cpu-prof): self time per bucket,
 * by the file each sampled function lives in. The buckets are the ones issue 22 measured: the AWS
 * SDK, the memcached client, sqs-jobs' own code by part, zod, pino, Node's internals, GC.
 */
import { readFileSync } from 'node:fs';

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
