import { z } from 'zod';

// Queue URLs: every form AWS, LocalStack, ElasticMQ and moto hand out, and what they say (name,
// account, region, FIFO).

/** Why `value` is not an http(s) URL with a host, or undefined when it is one. Never throws. */
export function httpUrlProblem(value: string, example: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `must be an http(s) URL, e.g. ${example}`;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return `must be an http(s) URL, e.g. ${example}`;
  return undefined;
}

export const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
/** What a queue URL says about its queue. */
export interface QueueUrlParts {
  readonly name: string;
  readonly account: string;
  /** From the host (AWS, LocalStack's dynamic strategy) or the path (its path strategy); undefined when the URL does not say. */
  readonly region: string | undefined;
  readonly fifo: boolean;
}

const ACCOUNT = /^[A-Za-z0-9_-]{1,64}$/;
/** SQS queue names: 1-80 characters, letters, digits, - and _; a FIFO queue's ends in .fifo (counted). */
const QUEUE_NAME = /^(?=.{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$/;
/**
 * Hosts that carry the region: sqs.<region>.amazonaws.com[.cn], sqs.<region>.api.aws, LocalStack's
 * dynamic/standard sqs.<region>.localhost.localstack.cloud; the legacy <region>.queue.amazonaws.com
 * and LocalStack's domain strategy <region>.queue.localhost.localstack.cloud.
 */
const REGION_HOSTS = [/^sqs\.([a-z0-9-]+)\./, /^([a-z0-9-]+)\.queue\./];

export const QUEUE_URL_EXAMPLE = 'https://sqs.us-east-1.amazonaws.com/123456789012/jobs';
const QUEUE_URL_RULE =
  'must end in /<account id>/<queue name> (AWS, moto, ElasticMQ, LocalStack), or be /queue/<region>/<account id>/<queue name> (LocalStack path strategy), as CreateQueue or GetQueueUrl return it';

/**
 * Split a queue URL into name, account and region, or say which rule it breaks. Accepts every form
 * AWS and the emulators return:
 * - AWS, moto: `https://sqs.<region>.amazonaws.com/<account>/<name>` (also the legacy `<region>.queue.amazonaws.com`)
 * - LocalStack `SQS_ENDPOINT_STRATEGY=off`, ElasticMQ, moto on loopback: `http://host:port/<account>/<name>`
 * - LocalStack `path`: `http://host:port/queue/<region>/<account>/<name>`
 * - LocalStack `dynamic` (its default): `http://sqs.<region>.localhost.localstack.cloud:port/<account>/<name>`
 */
export function parseQueueUrl(value: string): { ok: true; parts: QueueUrlParts } | { ok: false; rule: string } {
  const notUrl = httpUrlProblem(value, QUEUE_URL_EXAMPLE);
  if (notUrl !== undefined) return { ok: false, rule: notUrl.replace('must be an http(s) URL', 'must be an http(s) queue URL') };
  const url = new URL(value);
  if (url.search !== '' || url.hash !== '') return { ok: false, rule: 'must have no query string or fragment' };
  const segments = url.pathname.replace(/\/$/, '').split('/').slice(1);
  let region: string | undefined;
  let account: string | undefined;
  let name: string | undefined;
  if (segments.length === 2) [account, name] = segments;
  else if (segments.length === 4 && segments[0] === 'queue') [, region, account, name] = segments;
  if (account === undefined || name === undefined) return { ok: false, rule: QUEUE_URL_RULE };
  if (region !== undefined && !REGION.test(region))
    return { ok: false, rule: `has "${region}" where the path strategy puts a region such as us-east-1` };
  if (!ACCOUNT.test(account))
    return { ok: false, rule: `has "${account}" where the account id goes (letters and digits, e.g. 123456789012)` };
  if (!QUEUE_NAME.test(name)) {
    return { ok: false, rule: `ends in "${name}", which is not a queue name (1-80 letters, digits, - and _; FIFO names end in .fifo)` };
  }
  region ??= REGION_HOSTS.map((pattern) => pattern.exec(url.hostname)?.[1]).find((r) => r !== undefined && REGION.test(r));
  return { ok: true, parts: Object.freeze({ name, account, region, fifo: name.endsWith('.fifo') }) };
}

export const queueUrlSchema = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    const parsed = parseQueueUrl(value);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.rule });
  });

/** Parsed queue URLs: a worker or producer sees a handful, and asks per message (metrics, events). */
const PARTS = new Map<string, QueueUrlParts | undefined>();
const PARTS_KEPT = 1_000;

function partsOf(queueUrl: string): QueueUrlParts | undefined {
  if (PARTS.has(queueUrl)) return PARTS.get(queueUrl);
  const parsed = parseQueueUrl(queueUrl);
  const parts = parsed.ok ? parsed.parts : undefined;
  if (PARTS.size >= PARTS_KEPT) PARTS.clear(); // bounded: a process that sees ever new URLs parses again
  PARTS.set(queueUrl, parts);
  return parts;
}

/** A FIFO queue's name ends in .fifo, and the name is the URL's last segment (any form above). Cheap: called per message. */
export function isFifoQueue(queueUrl: string): boolean {
  return queueUrl.endsWith('.fifo') || queueUrl.endsWith('.fifo/');
}

/** The queue's name, from any URL form; the last path segment (or the input) for anything else. */
export function queueNameOf(queueUrl: string): string {
  const parts = partsOf(queueUrl);
  if (parts !== undefined) return parts.name;
  return (
    queueUrl
      .replace(/[?#].*$/, '')
      .split('/')
      .filter(Boolean)
      .pop() ?? queueUrl
  );
}

/** The account id in a queue URL, or undefined when it is not a queue URL. */
export function queueAccountOf(queueUrl: string): string | undefined {
  return partsOf(queueUrl)?.account;
}

/** The region a queue URL names (AWS hosts, LocalStack's path and dynamic forms), else undefined. */
export function queueRegionOf(queueUrl: string): string | undefined {
  return partsOf(queueUrl)?.region;
}
