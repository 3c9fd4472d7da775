import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyJob } from '../../src/core/job.js';
import { createJobsApi } from '../../src/http/index.js';
import { createProducer, type Producer } from '../../src/index.js';
import { MemoryQueue } from '../../src/testing/memory-queue.js';

/*
 * The docs' snippets that name the README's job (`resize-image`) run as written against the
 * README's own jobs.ts: the args they send pass its schema, and the answers they show are the
 * answers given. A snippet that sends `imageId` to a job whose schema has `imageKey` fails here.
 */

const root = process.cwd();
let resizeImage: AnyJob;

beforeAll(async () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const jobs = /```ts\n(\/\/ jobs\.ts[\s\S]*?)```/.exec(readme)![1]!;
  const dir = join(root, '.local/readme-jobs');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `jobs-${process.pid}.ts`);
  writeFileSync(file, jobs.replace(/from 'sqs-jobs'/g, `from '${resolve(root, 'src/index.ts')}'`));
  ({ resizeImage } = (await import(file)) as { resizeImage: AnyJob });
});

/** Every Markdown page a user reads: the README, docs/, the examples' READMEs. */
function pages(): { name: string; text: string }[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => join(e.parentPath, e.name));
  const examples = readdirSync(join(root, 'examples'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(root, 'examples', e.name, 'README.md'));
  return [join(root, 'README.md'), ...docs, ...examples]
    .filter((f) => {
      try {
        readFileSync(f);
        return true;
      } catch {
        return false;
      }
    })
    .map((f) => ({ name: relative(root, f), text: readFileSync(f, 'utf8') }));
}

/** Where a snippet is: page and line. */
const where = (page: { name: string; text: string }, index: number) => `${page.name}:${page.text.slice(0, index).split('\n').length}`;

describe("the docs' snippets against the README's jobs", () => {
  let producer: Producer;
  beforeAll(() => {
    const queue = new MemoryQueue();
    producer = createProducer({ queueUrl: queue.create('jobs'), queue, jobs: [resizeImage] }, {});
  });
  afterAll(() => producer.close());

  it('every JSON args of resize-image (CLI --args, wire-format bodies) passes its schema', () => {
    const found: string[] = [];
    for (const page of pages()) {
      const patterns = [/enqueue resize-image [^\n]*--args '([^']+)'/g, /"job":\s*"resize-image",\s*"args":\s*(\{[^}]*\})/g];
      for (const pattern of patterns) {
        for (const m of page.text.matchAll(pattern)) {
          found.push(where(page, m.index));
          const parsed = resizeImage.args.safeParse(JSON.parse(m[1]!));
          expect(parsed.success, `${where(page, m.index)}: ${m[1]}`).toBe(true);
        }
      }
    }
    expect(found.length).toBeGreaterThanOrEqual(3);
  });

  it('every enqueue of resizeImage in code names only the fields its schema has, and every one it needs', () => {
    const shape = Object.keys((resizeImage.args as unknown as { shape: Record<string, unknown> }).shape);
    let seen = 0;
    for (const page of pages()) {
      for (const m of page.text.matchAll(/enqueue\((?:resizeImage|'resize-image'), \{([^}]*)\}/g)) {
        seen++;
        const keys = m[1]!.split(',').map((part) => part.split(':')[0]!.trim());
        expect(keys.sort(), `${where(page, m.index)}: {${m[1]}}`).toEqual([...shape].sort());
      }
    }
    expect(seen).toBeGreaterThanOrEqual(4);
  });

  it('every curl POST to /jobs/resize-image gets the answer the page shows: 202, or the 422 with the fields and rules it lists', async () => {
    const api = createJobsApi({ producer, basePath: '/api' });
    let seen = 0;
    for (const page of pages()) {
      const curls = /\$ curl [^\n]*\/api\/jobs\/resize-image [^\n]*-d '([^']+)'\n([\s\S]*?)(?=\n\$ |\n```)/g;
      for (const m of page.text.matchAll(curls)) {
        seen++;
        const at = where(page, m.index);
        const response = await api.fetch(
          new Request('http://localhost:3000/api/jobs/resize-image', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: m[1]!,
          }),
        );
        const shown = m[2]!;
        const status = /^HTTP\/1\.1 (\d{3})/.exec(shown)?.[1] ?? /"status":(\d{3})/.exec(shown)?.[1];
        expect(status, `${at}: the page shows no status`).toBeDefined();
        expect(response.status, at).toBe(Number(status));
        if (response.status === 422) {
          const body = (await response.json()) as { errors: { field: string; rule: string }[] };
          const listed = [...shown.matchAll(/\{"field":"([^"]+)","rule":"([^"]+)"\}/g)].map((e) => ({ field: e[1], rule: e[2] }));
          expect(body.errors, at).toEqual(listed);
        }
      }
    }
    expect(seen).toBeGreaterThanOrEqual(2);
  });
});
