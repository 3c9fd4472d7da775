import { type Browser, chromium, type Page } from 'playwright-core';

/**
 * Debian's Chromium (scripts/ensure-chromium.sh installs it), headless, with what this machine's
 * closed network needs: no background connections to Google's hosts.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.SQS_JOBS_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/**
 * A page that records what must never happen on a dashboard: a dialog (alert, confirm, prompt),
 * an error thrown by a script, a console error, and a request that leaves the origin.
 */
export async function watchedPage(browser: Browser, origin: string): Promise<{ page: Page; incidents: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const page = await context.newPage();
  const incidents: string[] = [];
  page.on('dialog', (d) => {
    incidents.push(`dialog: ${d.type()} ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => incidents.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') incidents.push(`console error: ${m.text()}`);
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) incidents.push(`request off the origin: ${r.url()}`);
  });
  return { page, incidents };
}
