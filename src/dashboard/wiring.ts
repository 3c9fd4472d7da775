import { createCloudWatchClient, createSqsClient } from '../adapters/aws-clients.js';
import { CloudWatchReader } from '../adapters/cloudwatch-reader.js';
import { MemcachedLock } from '../adapters/memcached-lock.js';
import { openS3Archive, resolveS3Settings } from '../adapters/s3-archive.js';
import { SqsQueueAdmin } from '../adapters/sqs-admin.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import {
  type Env,
  parseConfig,
  resolveAwsSettings,
  resolveCloudWatchSettings,
  resolveMemcachedSettings,
  resolveMetricsNamespace,
  resolveQueueUrl,
} from '../config/env.js';
import { createLogger } from '../config/log.js';
import { parseArchiveUrl } from '../ops/archive-format.js';
import { createSchedules } from '../ops/wiring.js';
import { Pauses } from '../ops/pauses.js';
import { JobCanceller } from '../status/cancel-job.js';
import { resolveJobStore } from '../status/wiring.js';
import { AuthGate } from './auth.js';
import { resolveAuth } from './auth-config.js';
import {
  type ArchiveSource,
  type DashboardOptions,
  type DashboardSettings,
  type DashboardSources,
  dashboardOptionsSchema,
} from './options.js';

/** The options checked, and the clients they name made (closed by `sources.close()`). */
export function resolveDashboard(options: DashboardOptions, env: Env): { settings: DashboardSettings; sources: DashboardSources } {
  const o = parseConfig(dashboardOptionsSchema, options, 'options', 'invalid dashboard options');
  const queues = (o.queues ?? [undefined]).map((q, i) =>
    resolveQueueUrl(q, env, o.queues === undefined ? 'queueUrl' : `options.queues.${i}`),
  );
  const auth = resolveAuth(o.auth, env);
  // Audit lines at info whatever SQS_JOBS_LOG_LEVEL says: a level set to quiet the app must not drop who did what.
  const audit = o.logger ?? createLogger({ ...env, SQS_JOBS_LOG_LEVEL: 'info' }, { component: 'dashboard' });
  for (const note of auth.notes) audit.warn({}, note);
  const settings: DashboardSettings = {
    queues: [...new Set(queues)],
    basePath: o.basePath,
    readOnly: o.readOnly,
    authorize: o.authorize,
    gate: new AuthGate(auth, (message) => audit.warn({}, message)),
    audit,
    allowedHosts: Array.isArray(o.allowedHosts) ? o.allowedHosts.map((h) => h.toLowerCase()) : o.allowedHosts,
    slaSeconds: o.slaSeconds,
    namespace: resolveMetricsNamespace(o.namespace, env, 'options.namespace'),
    windowMinutes: o.windowMinutes,
    refreshSeconds: o.refreshSeconds,
    deadLetterLimit: o.deadLetterLimit,
  };
  // Every setting checked before any client is made: a bad option leaks none.
  const sqsSettings = resolveAwsSettings({ endpoint: o.endpoint, region: o.region }, env, {
    endpoint: 'options.endpoint',
    region: 'options.region',
  });
  const cwSettings = resolveCloudWatchSettings({ endpoint: o.cloudwatchEndpoint, region: o.region }, env, {
    endpoint: 'options.cloudwatchEndpoint',
    region: 'options.region',
  });
  const memcached = resolveMemcachedSettings(o.memcached, env, 'options.memcached');
  const where = typeof o.archive === 'string' ? parseArchiveUrl(o.archive, 'options.archive') : undefined;
  const s3Names = { endpoint: 'options.s3Endpoint', region: 'options.region' };
  const s3Settings = where === undefined ? undefined : resolveS3Settings({ endpoint: o.s3Endpoint, region: o.region }, env, s3Names);
  const owned = resolveJobStore(o.store, env);
  const store = owned ?? o.producer?.store;
  const closeOwned = () => {
    if (owned !== undefined && owned !== o.store) owned.close();
  };
  // One client on the workers' memcached (the same key prefix), for cancel and the tenant meter (unless given).
  const lock =
    memcached !== undefined && (store !== undefined || o.tenantMeter === undefined)
      ? new MemcachedLock({ ...memcached, keyPrefix: o.lockKeyPrefix })
      : undefined;
  const canceller = store !== undefined && lock !== undefined ? new JobCanceller({ lock }, env, { store }) : undefined;
  // Run now sends through SQS at the dashboard's endpoint; the store is the dashboard's (closed below, not by it).
  const schedules =
    owned?.schedules === undefined
      ? undefined
      : createSchedules({ store: owned, queueUrl: settings.queues[0], endpoint: o.endpoint, region: o.region }, env);
  // Pauses on the dashboard's store, told to the workers through the same memcached client.
  const pauses =
    owned?.controls === undefined ? undefined : new Pauses({ controls: owned.controls, notices: lock?.controls, close: () => {} });
  const tenantLock = o.tenantMeter === undefined ? lock : undefined;
  // Read only (no put here): no KMS key to name; SSE-KMS records need kms:Decrypt on this role.
  const s3 = where === undefined || s3Settings === undefined ? undefined : openS3Archive(where, s3Settings, {}, env);
  const archive: ArchiveSource | undefined = typeof o.archive === 'object' ? o.archive : s3;
  const sqs = createSqsClient(sqsSettings, {}, env);
  const cw = createCloudWatchClient(cwSettings, {}, env);
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
      tenants: o.tenantMeter ?? tenantLock?.tenants,
      schedules,
      pauses,
      archive,
      close: () => {
        s3?.close();
        schedules?.close();
        canceller?.close();
        lock?.close();
        closeOwned();
        sqs.destroy();
        cw.destroy();
      },
    },
  };
}
