import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../core/errors.js';
import { type AnyEvent, isEventDefinition } from '../core/event.js';
import { JobRegistry, isDefinition } from '../core/job-registry.js';
import { isScheduleDefinition, type ScheduleDefinition } from '../schedules/define.js';

/**
 * Import a module (or a folder's index) named on the command line and register every job it
 * exports. Only this start-up path loads code: nothing a message says is ever imported.
 */
export async function loadJobs(path: string): Promise<JobRegistry> {
  const { file, exports } = await loadModule(path);
  const registry = new JobRegistry(Object.values(exports).filter(isDefinition));
  if (registry.size === 0) throw new ConfigError(`${file} exports no job made by defineJob() or defineBatchJob()`);
  return registry;
}

/** The events a module names, by name: those it exports (defineEvent) and those its jobs run on (`on`). */
export async function loadEvents(path: string): Promise<Map<string, AnyEvent>> {
  const { exports } = await loadModule(path);
  const events = new Map<string, AnyEvent>();
  for (const value of Object.values(exports)) {
    if (isEventDefinition(value)) events.set(value.name, value);
    else if (isDefinition(value) && value.kind === 'sqs-jobs/job' && value.on !== undefined)
      events.set(value.on.event.name, value.on.event);
  }
  return events;
}

/** The schedules a module exports (defineSchedule): ConfigError when it exports none, unless `none` is allowed. */
export async function loadSchedules(path: string, none: 'refused' | 'allowed'): Promise<ScheduleDefinition[]> {
  const { file, exports } = await loadModule(path);
  const schedules = Object.values(exports).filter(isScheduleDefinition);
  if (schedules.length === 0 && none === 'refused')
    throw new ConfigError(`${file} exports no schedule made by defineSchedule() (to remove all of the app's, pass --allow-empty)`);
  return schedules;
}

async function loadModule(path: string): Promise<{ file: string; exports: Record<string, unknown> }> {
  const file = await entryFile(resolve(path));
  const load = loaderOf(file);
  try {
    return { file, exports: (await load()) as Record<string, unknown> };
  } catch (error) {
    throw new ConfigError(`cannot load jobs from ${file}: ${(error as Error).message}`, { cause: error });
  }
}

const TYPESCRIPT = /\.[cm]?ts$/;

/**
 * How to import `file`. JavaScript: as it is. TypeScript: through tsx when the app has it
 * installed (it takes every TypeScript, and imports without extensions), else by Node itself
 * where it strips types (22.18 and later); else a ConfigError that says what to do.
 *
 * tsx is registered for the whole process (its ESM and CommonJS hooks, as its own CLI does), not
 * in a namespace of its own as `tsImport` would: a namespace loads the file's imports again, so
 * the `sqs-jobs` a jobs file imports would be a second copy of the one running it.
 */
function loaderOf(file: string): () => Promise<unknown> {
  const url = pathToFileURL(file).href;
  if (!TYPESCRIPT.test(file)) return () => import(url);
  const tsx = tsxApiFor(file);
  const strips = Boolean((process.features as { typescript?: unknown }).typescript);
  if (typeof tsx === 'object') {
    return async () => {
      for (const api of [tsx.esm, tsx.cjs]) ((await import(api)) as TsxApi).register();
      return import(url);
    };
  }
  if (strips) return () => import(url);
  if (tsx === 'too old')
    throw new ConfigError(
      `--jobs: ${file} is TypeScript, and this app's tsx is too old to load it for sqs-jobs: update it (npm i -D tsx@^4.9)`,
    );
  throw new ConfigError(
    `--jobs: ${file} is TypeScript, and Node ${process.version} cannot load it by itself. Either install tsx in your app ` +
      '(npm i -D tsx: sqs-jobs then loads TypeScript through it), run on Node 22.18 or later (it strips types), ' +
      'or compile your jobs and pass the .js file',
  );
}

interface TsxApi {
  register(): unknown;
}

/**
 * The URLs of tsx's ESM and CommonJS APIs as installed where `file` is (the app's node_modules);
 * 'too old' for a tsx without them (3.x); undefined when tsx is not installed there. By its package's
 * `exports` (their `import` entries): require.resolve would answer the CommonJS builds, which
 * cannot be imported.
 */
function tsxApiFor(file: string): { esm: string; cjs: string } | 'too old' | undefined {
  let manifest: string;
  let exports: Record<string, { import?: { default?: string } | string }> | undefined;
  try {
    const require = createRequire(file);
    manifest = require.resolve('tsx/package.json');
    exports = (require('tsx/package.json') as { exports?: typeof exports }).exports;
  } catch {
    return undefined; // not installed
  }
  const url = (name: string) => {
    const entry = exports?.[name]?.import;
    const path = typeof entry === 'string' ? entry : entry?.default;
    return path === undefined ? undefined : new URL(path, pathToFileURL(manifest)).href;
  };
  const esm = url('./esm/api');
  const cjs = url('./cjs/api');
  return esm === undefined || cjs === undefined ? 'too old' : { esm, cjs };
}

async function entryFile(path: string): Promise<string> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) throw new ConfigError(`--jobs: ${path} does not exist`);
  if (!info.isDirectory()) return path;
  for (const name of ['index.js', 'index.mjs', 'index.ts']) {
    const candidate = join(path, name);
    if (
      await stat(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  throw new ConfigError(`--jobs: folder ${path} has no index.js, index.mjs or index.ts`);
}
