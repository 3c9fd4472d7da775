import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** Debian's Node (20 on these machines) when it is older than sqs-jobs supports (22.12), else undefined. */
const SYSTEM_NODE = (() => {
  if (!existsSync('/usr/bin/node')) return undefined;
  const version = execFileSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major < 22 || (major === 22 && minor < 12) ? version : undefined;
})();

// What a newcomer whose Node is Debian's 20 sees from `npm test`, `npm run demo` and the benchmarks:
// one line, and the LTS from .node/ instead (scripts/node.sh), never the code failing halfway.
describe.skipIf(SYSTEM_NODE === undefined)('scripts/node.sh on a machine whose Node is older than 22.12', () => {
  it('use_supported_node puts the LTS first on PATH and says so in one line on stderr', async () => {
    const { stdout, stderr } = await run('bash', ['-c', 'source scripts/node.sh && use_supported_node && node --version'], {
      env: { ...process.env, PATH: '/usr/bin:/bin' },
      timeout: 120_000,
    });
    const lts = /SQS_JOBS_LTS_NODE="([\d.]+)"/.exec(readFileSync('scripts/node.sh', 'utf8'))![1];
    expect(stdout.trim()).toBe(`v${lts}`);
    expect(stderr.trim().split('\n').at(-1)).toBe(
      `[node] using Node ${lts} from .node/ (the npm registry's node-linux package) instead of this machine's v${SYSTEM_NODE}`,
    );
  }, 180_000);

  it.skipIf(process.version === `v${SYSTEM_NODE}`)('a supported Node on PATH is kept, and nothing is said', async () => {
    const { stdout, stderr } = await run('bash', ['-c', 'source scripts/node.sh && use_supported_node && node --version'], {
      env: { ...process.env, PATH: `${process.execPath.replace(/\/node$/, '')}:/usr/bin:/bin` },
    });
    expect(stdout.trim()).toBe(process.version);
    expect(stderr).toBe('');
  });
});
