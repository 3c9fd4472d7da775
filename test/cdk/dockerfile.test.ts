import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src/cdk/settings.js';

// No Docker engine on these machines: the image is not built here, so check that the Dockerfile
// agrees with the package and with the stack that runs it.
const root = new URL('../../', import.meta.url);
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
const dockerignore = readFileSync(new URL('.dockerignore', root), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter(Boolean);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { bin: Record<string, string> };

describe('Dockerfile', () => {
  it('is multi-stage and runs as a non-root user', () => {
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^FROM node:26-\S+ AS build$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it('starts the package bin, and by default the jobs module the stack names', () => {
    const entry = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(dockerfile)![1]!) as string[];
    expect(entry).toEqual(['node', pkg.bin['sqs-jobs']!.replace(/^\.\//, '')]);
    const cmd = JSON.parse(/^CMD (.*)$/m.exec(dockerfile)![1]!) as string[];
    expect(cmd).toEqual(['worker', '--jobs', DEFAULT_SETTINGS.jobsModule]);
  });

  it('copies what the build needs and the build context keeps it', () => {
    for (const path of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'handlers']) {
      expect(dockerfile).toContain(path);
      expect(dockerignore).not.toContain(path);
    }
    for (const heavy of ['node_modules', '.venv', '.node', '.local', '.git', 'infra']) expect(dockerignore).toContain(heavy);
  });
});
