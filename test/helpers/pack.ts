import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The package as it is published (`npm run package`: scripts/pack.sh), built from this checkout in a
 * staging folder under `tmp` (so a test never races another over dist/): answers the tarball's path.
 */
export async function packTarball(tmp: string): Promise<string> {
  const { stdout } = await run('bash', ['scripts/pack.sh', join(tmp, 'pkg'), tmp], { cwd: process.cwd() });
  return stdout.trim().split('\n').at(-1)!;
}

/** Install into the app at `app` as a user does (`npm install <specs>`), from the registry or its cache; scripts off. */
export async function npmInstall(app: string, specs: readonly string[], dev = false): Promise<void> {
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', ...(dev ? ['--save-dev'] : []), ...specs],
    {
      cwd: app,
      timeout: 240_000,
    },
  );
}
