import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A CA, a server certificate it signed, and a second CA that signed nothing: PEM files, made at run time. */
export interface TestCertificates {
  readonly dir: string;
  /** The CA that signed the server's certificate. */
  readonly ca: string;
  /** Another CA: a client trusting only it refuses the server. */
  readonly otherCa: string;
  /** The server's certificate (holding DNS:`name` only, no IP address) and its key, for memcached's -Z. */
  readonly cert: string;
  readonly key: string;
  readonly name: string;
  /** memcached's options to serve TLS with them. */
  readonly memcachedArgs: readonly string[];
  remove(): void;
}

/**
 * Make certificates with the openssl command (Debian installs it with ca-certificates; .ci/run
 * names it): EC P-256 keys, valid for two days. Files are world-readable, in a world-readable
 * folder, because memcached drops to `nobody` when run as root.
 */
export function makeTestCertificates(name = 'memcached.test'): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'sqs-jobs-tls-'));
  const at = (file: string) => join(dir, file);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=sqs-jobs test CA');
  openssl('req', '-x509', ...key, '-keyout', 'other-ca.key', '-out', 'other-ca.pem', '-days', '2', '-subj', '/CN=sqs-jobs other CA');
  openssl('req', ...key, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${name}`);
  writeFileSync(at('server.ext'), `subjectAltName=DNS:${name}\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-set_serial',
    '2',
    '-days',
    '2',
    '-extfile',
    'server.ext',
    '-out',
    'server.pem',
  );
  chmodSync(dir, 0o755);
  for (const file of readdirSync(dir)) chmodSync(at(file), 0o644);
  return {
    dir,
    ca: at('ca.pem'),
    otherCa: at('other-ca.pem'),
    cert: at('server.pem'),
    key: at('server.key'),
    name,
    memcachedArgs: ['-Z', '-o', `ssl_chain_cert=${at('server.pem')},ssl_key=${at('server.key')}`],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
