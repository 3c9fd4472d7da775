import { tcpAnswers } from '../helpers/net.js';

export default async function setup(): Promise<void> {
  const emq = new URL(process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9324');
  const [host, port] = (process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11211').split(':');
  if (!(await tcpAnswers(emq.hostname, Number(emq.port))) || !(await tcpAnswers(host!, Number(port)))) {
    throw new Error('the fault suite needs ElasticMQ and memcached on loopback: run `npm run test:faults` (which starts them)');
  }
}
