import { LOCAL_ENDPOINT, LOCAL_MEMCACHED } from './stack.js';
import { tcpAnswers } from './net.js';

/** Integration tests need the local stack; say how to start it instead of failing one by one. */
export default async function setup(): Promise<void> {
  const moto = new URL(LOCAL_ENDPOINT);
  const [mHost, mPort] = LOCAL_MEMCACHED.split(':');
  const up = (await tcpAnswers(moto.hostname, Number(moto.port))) && (await tcpAnswers(mHost!, Number(mPort)));
  if (!up) {
    throw new Error(`the local stack is not running (SQS at ${LOCAL_ENDPOINT}, memcached at ${LOCAL_MEMCACHED}): run \`npm test\` (which starts it) or \`npm run stack:up\` first`);
  }
}
