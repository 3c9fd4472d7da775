import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { SQSClient } from '@aws-sdk/client-sqs';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AwsSettings, Env } from '../config/env.js';
import { isLoopback } from '../config/sns-endpoint.js';

/**
 * One place that builds AWS clients. Each client gets its own socket pool, so a long poll that
 * holds a socket for 20 s never makes a delete or a heartbeat wait for one (see DESIGN.md).
 */
export interface ClientOptions {
  /** Sockets in this client's pool. */
  readonly maxSockets?: number;
  /** Per-request timeout; must exceed the long-poll wait for a receive client. */
  readonly requestTimeoutMs?: number;
  /** Attempts per call, the first included, with the SDK's standard backoff between them (SDK default 3). */
  readonly maxAttempts?: number;
}

/**
 * Credentials for loopback endpoints (emulators accept any): the ones in `env` when it has them
 * (the SDK itself only reads process.env, which a caller's `env` may not be), else placeholders,
 * so the SDK never probes instance metadata over the network. Other endpoints: the SDK's chain.
 */
function localCredentials(settings: AwsSettings, env: Env) {
  if (!isLoopback(settings.endpoint)) return undefined;
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    return {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    };
  }
  if (env.AWS_PROFILE) return undefined;
  return { accessKeyId: 'test', secretAccessKey: 'test' };
}

function requestHandler(options: ClientOptions): NodeHttpHandler {
  const maxSockets = options.maxSockets ?? 50;
  return new NodeHttpHandler({
    httpAgent: new HttpAgent({ keepAlive: true, maxSockets }),
    httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets }),
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    connectionTimeout: 5_000,
  });
}

/**
 * The settings every client shares: region, endpoint, loopback credentials, its own socket pool,
 * and `cacheMiddleware`: the SDK otherwise builds each call's middleware chain anew (clones the
 * client's stack, adds the command's, sorts them), about 120 µs of CPU a call on a delete batch
 * and 270 on a DynamoDB UpdateItem (bench/README.md); with it, once per kind of command. The
 * price, as the SDK documents it: a middleware added to the client after its first call of a kind
 * is not seen by later calls of that kind.
 */
export function clientConfig(settings: AwsSettings, options: ClientOptions, env: Env) {
  const credentials = localCredentials(settings, env);
  return {
    region: settings.region,
    cacheMiddleware: true,
    ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
    ...(credentials === undefined ? {} : { credentials }),
    requestHandler: requestHandler(options),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  };
}

/**
 * The client without the SDK's logger middleware. sqs-jobs gives its clients no logger, so the
 * SDK's default one (a no-op) gets every call's input and reply, each first copied field by field
 * to hide sensitive members: on every receive, delete and status write, work nobody reads.
 */
export function withoutLogging<C extends { middlewareStack: { remove(name: string): boolean } }>(client: C): C {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

/**
 * An SQS client with sqs-jobs' settings: `settings`' region and endpoint; a keep-alive socket pool of
 * its own (by default 50 sockets, 30 s per request: see ClientOptions); on a loopback endpoint, the
 * keys in `env`, else its AWS_PROFILE, else placeholders; no SDK logger (withoutLogging); each kind of
 * call's middleware resolved once (add a middleware of your own before its first call).
 */
export function createSqsClient(settings: AwsSettings, options: ClientOptions = {}, env: Env = process.env): SQSClient {
  return withoutLogging(new SQSClient(clientConfig(settings, options, env)));
}

/** A CloudWatch client with the same settings as createSqsClient's. */
export function createCloudWatchClient(settings: AwsSettings, options: ClientOptions = {}, env: Env = process.env): CloudWatchClient {
  return withoutLogging(new CloudWatchClient(clientConfig(settings, options, env)));
}

/** A DynamoDB client with the same settings as createSqsClient's. */
export function createDynamoClient(settings: AwsSettings, options: ClientOptions = {}, env: Env = process.env): DynamoDBClient {
  return withoutLogging(new DynamoDBClient(clientConfig(settings, options, env)));
}
