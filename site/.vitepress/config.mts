import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitepress';

/*
 * The docs site: the Markdown in ../docs as pages, and the API reference TypeDoc writes to
 * ../docs/api from the package's doc comments (`npm run build` here runs both). A link to a page
 * that does not exist fails the build. Links that leave docs/ (the README, the examples, the
 * benchmarks) name files of the repository; the repository's own test (test/unit/docs-links.test.ts)
 * checks that each exists, and the site leaves them to the repository host.
 */

const here = dirname(fileURLToPath(import.meta.url));
const docs = resolve(here, '../../docs');
const apiSidebar = resolve(docs, 'api/typedoc-sidebar.json');

const repo = resolve(docs, '..');
const page = (text: string, link: string) => ({ text, link });

/** A link (relative to its page) to a file of the repository outside docs/: its first name is a repository entry, not a docs one. */
function leavesDocs(url: string): boolean {
  if (!url.includes('../')) return false;
  const top = url.replace(/^(\.\/)?(\.\.\/)+/, '').split('/')[0] ?? '';
  if (top === '' || top === 'docs' || existsSync(resolve(docs, top)) || existsSync(resolve(docs, `${top}.md`))) return false;
  return existsSync(resolve(repo, top)) || existsSync(resolve(repo, `${top}.md`));
}

export default defineConfig({
  title: 'sqs-jobs',
  description: 'Background jobs on Amazon SQS for Node.js and TypeScript',
  srcDir: '../docs',
  outDir: './dist',
  cacheDir: './.cache',
  cleanUrls: true,
  lastUpdated: false,
  // Only links that leave docs/ for the repository's own files (README, examples, bench, …) go unchecked here.
  ignoreDeadLinks: [leavesDocs],
  themeConfig: {
    search: { provider: 'local' },
    nav: [page('Guide', '/guide/jobs'), page('Operations', '/operations/operating'), page('Reference', '/reference/configuration'), page('API', '/api/')],
    sidebar: [
      {
        text: 'Guide',
        items: [
          page('Defining jobs', '/guide/jobs'),
          page('Enqueueing', '/guide/enqueue'),
          page('Running workers', '/guide/workers'),
          page('Running on Lambda', '/guide/lambda'),
          page('Tenant fairness', '/guide/fairness'),
          page('Rate limits', '/guide/rate-limits'),
          page('Priority tiers', '/guide/tiers'),
          page('Batch jobs', '/guide/batch-jobs'),
          page('Schedules', '/guide/schedules'),
          page('Pause and resume', '/guide/pause'),
          page('Keys on enqueue', '/guide/keys'),
          page('Status, progress and fan-out', '/guide/status-and-fan-out'),
          page('HTTP API', '/guide/http-api'),
          page('Events (SNS → SQS)', '/guide/events'),
          page('Metrics', '/guide/metrics'),
          page('Tracing', '/guide/tracing'),
        ],
      },
      {
        text: 'Operations',
        items: [page('Operating the queue', '/operations/operating'), page('Deploying to ECS Fargate or Lambda', '/operations/deploy'), page('The local stack', '/operations/local-stack')],
      },
      {
        text: 'Reference',
        items: [page('Configuration', '/reference/configuration'), page('Command line', '/reference/cli'), page('Wire format', '/reference/wire-format'), page('Errors', '/reference/errors'), page('Glossary', '/reference/glossary')],
      },
      {
        text: 'Deeper',
        collapsed: true,
        items: [
          page('Admission', '/admission'),
          page('Dashboard', '/dashboard'),
          page('The demo', '/demo'),
          page('Not yet here', '/not-yet'),
        ],
      },
      {
        text: 'API',
        collapsed: true,
        items: existsSync(apiSidebar) ? JSON.parse(readFileSync(apiSidebar, 'utf8')) : [],
      },
    ],
  },
});
