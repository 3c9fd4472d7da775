import { connect } from 'node:net';
import { LOCAL_ENDPOINT, LOCAL_MEMCACHED } from './stack.js';

function tcpAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.setTimeout(2_000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Integration tests need the local stack; say how to start it instead of failing one by one. */
export default async function setup(): Promise<void> {
  const moto = new URL(LOCAL_ENDPOINT);
  const [mHost, mPort] = LOCAL_MEMCACHED.split(':');
  const up = (await tcpAnswers(moto.hostname, Number(moto.port))) && (await tcpAnswers(mHost!, Number(mPort)));
  if (!up) {
    throw new Error(`the local stack is not running (SQS at ${LOCAL_ENDPOINT}, memcached at ${LOCAL_MEMCACHED}): run \`npm test\` (which starts it) or \`npm run stack:up\` first`);
  }
}
