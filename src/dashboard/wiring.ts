import { createCloudWatchClient, createSqsClient } from '../adapters/aws-clients.js';
import { CloudWatchReader } from '../adapters/cloudwatch-reader.js';
import { SqsQueueAdmin } from '../adapters/sqs-admin.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import {
  type Env,
  parseConfig,
  resolveAwsSettings,
  resolveCloudWatchSettings,
  resolveMemcached,
  resolveMetricsNamespace,
  resolveQueueUrl,
} from '../config/env.js';
import { JobCanceller } from '../status/cancel-job.js';
import { resolveJobStore } from '../status/wiring.js';
import { type DashboardOptions, type DashboardSettings, type DashboardSources, dashboardOptionsSchema } from './options.js';

/** The options checked, and the clients they name made (closed by `sources.close()`). */
export function resolveDashboard(options: DashboardOptions, env: Env): { settings: DashboardSettings; sources: DashboardSources } {
  const o = parseConfig(dashboardOptionsSchema, options, 'options', 'invalid dashboard options');
  const queues = (o.queues ?? [undefined]).map((q, i) =>
    resolveQueueUrl(q, env, o.queues === undefined ? 'queueUrl' : `options.queues.${i}`),
  );
  const settings: DashboardSettings = {
    queues: [...new Set(queues)],
    basePath: o.basePath,
    readOnly: o.readOnly,
    authorize: o.authorize,
    slaSeconds: o.slaSeconds,
    namespace: resolveMetricsNamespace(o.namespace, env, 'options.namespace'),
    windowMinutes: o.windowMinutes,
    refreshSeconds: o.refreshSeconds,
    deadLetterLimit: o.deadLetterLimit,
  };
  const sqs = createSqsClient(
    resolveAwsSettings({ endpoint: o.endpoint, region: o.region }, env, { endpoint: 'options.endpoint', region: 'options.region' }),
    {},
    env,
  );
  const cw = createCloudWatchClient(
    resolveCloudWatchSettings({ endpoint: o.cloudwatchEndpoint, region: o.region }, env, {
      endpoint: 'options.cloudwatchEndpoint',
      region: 'options.region',
    }),
    {},
    env,
  );
  const owned = resolveJobStore(o.store, env);
  const store = owned ?? o.producer?.store;
  const memcached = resolveMemcached(o.memcached, env, 'options.memcached');
  const canceller =
    store !== undefined && memcached !== undefined
      ? new JobCanceller({ memcached, ...(o.lockKeyPrefix === undefined ? {} : { lockKeyPrefix: o.lockKeyPrefix }) }, env, { store })
      : undefined;
  const producer = o.producer;
  return {
    settings,
    sources: {
      queue: new SqsQueuePort(sqs),
      admin: new SqsQueueAdmin(sqs),
      metrics: new CloudWatchReader(cw),
      store,
      cancel: canceller === undefined ? undefined : (id) => canceller.cancel(id),
      admission: producer?.admits ? (url) => producer.admissionState(url) : undefined,
      close: () => {
        canceller?.close();
        if (owned !== undefined && owned !== o.store) owned.close();
        sqs.destroy();
        cw.destroy();
      },
    },
  };
}
