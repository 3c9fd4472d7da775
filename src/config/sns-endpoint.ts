import { type AwsSettings, DEFAULT_NAMES, type Env, firstSet, resolveEndpoint, type SettingNames, type SettingsOptions } from './env.js';

/** Loopback, including LocalStack's names for it (localhost.localstack.cloud and its subdomains resolve to 127.0.0.1). */
export function isLoopback(endpoint: string | undefined): boolean {
  if (endpoint === undefined) return false;
  let host: string;
  try {
    host = new URL(endpoint).hostname;
  } catch {
    return false;
  }
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    host.startsWith('127.') ||
    /(^|\.)localhost\.localstack\.cloud$/.test(host)
  );
}

/**
 * SNS (events) endpoint and region: the option, else AWS_ENDPOINT_URL_SNS, else SQS's when it is
 * an emulator on loopback (`sqsEndpoint`, SQS_JOBS_ENDPOINT, AWS_ENDPOINT_URL_SQS: an emulator
 * delivers SNS only to its own queues), else AWS_ENDPOINT_URL. An SQS endpoint on AWS (a VPC or
 * FIPS endpoint) is never used for SNS.
 */
export function resolveSnsSettings(
  options: SettingsOptions,
  env: Env = process.env,
  names: SettingNames = DEFAULT_NAMES,
  sqsEndpoint?: string,
): AwsSettings {
  if (options.endpoint === undefined && firstSet(env, ['AWS_ENDPOINT_URL_SNS']) === undefined) {
    const sqs = sqsEndpoint ?? firstSet(env, ['SQS_JOBS_ENDPOINT', 'AWS_ENDPOINT_URL_SQS'])?.[1];
    if (isLoopback(sqs)) return resolveEndpoint({ ...options, endpoint: sqs }, env, names, [], 'SNS');
  }
  return resolveEndpoint(options, env, names, ['AWS_ENDPOINT_URL_SNS', 'AWS_ENDPOINT_URL'], 'SNS');
}
