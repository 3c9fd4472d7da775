import { execFile } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The package as `npm pack` makes it, built from this checkout into `tmp`: answers the tarball's
 * path. The build goes to a copy (so a test never races another over dist/), and the pack skips
 * the prepare script (it would need the devDependencies in the copy).
 */
export async function packTarball(tmp: string): Promise<string> {
  const repo = process.cwd();
  const pkg = join(tmp, 'pkg');
  await run('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', join(pkg, 'dist')], { cwd: repo });
  // Everything the manifest's `files` names, but the build (made above).
  const { files } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { files: string[] };
  for (const f of ['package.json', ...files.filter((name) => !name.startsWith('dist/'))])
    if (existsSync(join(repo, f))) cpSync(join(repo, f), join(pkg, f), { recursive: true });
  const { stdout } = await run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', tmp], { cwd: pkg });
  return join(tmp, stdout.trim().split('\n').at(-1)!);
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
