import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The docs are read on GitHub and from the package: every relative link in every Markdown file of
 * the repo (README, CONTRIBUTING, docs/, bench/, examples/) must name a file that exists, and an
 * #anchor must name a heading of that file (GitHub's heading ids).
 */

const ROOT = process.cwd();
const SKIP = new Set(['node_modules', '.git', '.local', '.node', 'dist', 'cdk.out', '.sqs-jobs', 'coverage']);

/** The API reference TypeDoc writes when the docs site is built (not in the repository). */
const GENERATED = join(ROOT, 'docs/api');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name) || name.startsWith('.venv')) return [];
    const path = join(dir, name);
    if (path === GENERATED) return [];
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The text outside code fences and inline code (blanked, so offsets keep their lines). */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line.replace(/`[^`\n]*`/g, (code) => ' '.repeat(code.length));
    })
    .join('\n');
}

/** GitHub's id for a heading, with -1, -2 … for repeats. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (m === null) continue;
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

/** An inline link or image, its text possibly over several lines. */
const LINK = /!?\[[^\]]*\]\(([^)\s]+)\)/g;
/** Link forms this check cannot follow: a title after the target, <target>, reference definitions, HTML. */
const UNCHECKED = /\]\([^)\s]+\s+"|\]\(<|^\s*\[[^\]]+\]:\s|<a\s[^>]*href=/m;

describe('the docs', () => {
  const files = markdownFiles(ROOT);

  it('are found (README, CONTRIBUTING, docs/, bench/)', () => {
    const names = files.map((f) => relative(ROOT, f));
    expect(names).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'bench/README.md', 'docs/guide/jobs.md']));
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = prose(readFileSync(file, 'utf8'));
      const unchecked = UNCHECKED.exec(text);
      if (unchecked !== null) broken.push(`${relative(ROOT, file)}: a link this check cannot follow: ${unchecked[0]}`);
      for (const m of text.matchAll(LINK)) {
        const target = m[1]!;
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const to = path === '' ? file : resolve(dirname(file), decodeURI(path));
        const line = text.slice(0, m.index).split('\n').length;
        const where = `${relative(ROOT, file)}:${line}: ${target}`;
        if (!existsSync(to)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor !== undefined && to.endsWith('.md') && !anchorsOf(readFileSync(to, 'utf8')).has(anchor)) {
          broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('keep the README short: the front door, with the depth in docs/', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(250);
  });
});
