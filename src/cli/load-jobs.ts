import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../core/errors.js';
import { type AnyEvent, isEventDefinition } from '../core/event.js';
import { JobRegistry, isDefinition } from '../core/job.js';

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

async function loadModule(path: string): Promise<{ file: string; exports: Record<string, unknown> }> {
  const file = await entryFile(resolve(path));
  try {
    return { file, exports: (await import(pathToFileURL(file).href)) as Record<string, unknown> };
  } catch (error) {
    throw new ConfigError(`cannot load jobs from ${file}: ${(error as Error).message}`, { cause: error });
  }
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
  throw new ConfigError(`--jobs: folder ${path} has no index.js or index.ts`);
}
