import type { QueueAdmin } from '../ports/queue-admin.js';
import type { Point } from '../ports/metrics-reader.js';

/** How often the queues' depth is sampled, and for how long the samples are kept. */
const SAMPLE_MS = 15_000;
const KEEP_MS = 3_600_000;

/**
 * The queues' depth over the last hour as this dashboard has seen it: SQS keeps no history of
 * its counts that every server can answer (AWS/SQS metrics are AWS's, at one-minute periods and
 * late), so the dashboard samples the queues it shows every 15 s once a page has been viewed
 * (one GetQueueAttributes per queue per sample), and charts what it has.
 */
export class DepthHistory {
  readonly #admin: QueueAdmin;
  readonly #samples = new Map<string, Point[]>();
  #urls: readonly string[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(admin: QueueAdmin) {
    this.#admin = admin;
  }

  /** Sample these queues from now on (the latest page's list), and record counts just read. */
  watch(urls: readonly string[], read: ReadonlyMap<string, number>, now: number = Date.now()): void {
    this.#urls = urls;
    for (const [url, depth] of read) this.#record(url, depth, now);
    this.#timer ??= setInterval(() => void this.#sample(), SAMPLE_MS);
    this.#timer.unref();
  }

  /** The samples of one queue, oldest first: messages waiting (visible and delayed). */
  of(url: string): Point[] {
    return this.#samples.get(url) ?? [];
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #sample(): Promise<void> {
    const now = Date.now();
    await Promise.all(
      this.#urls.map(async (url) => {
        try {
          const c = await this.#admin.counts(url);
          this.#record(url, c.visible + c.delayed, now);
        } catch {
          // a gap in the chart, not an error on a page
        }
      }),
    );
  }

  #record(url: string, depth: number, at: number): void {
    const points = this.#samples.get(url) ?? [];
    const last = points.at(-1);
    if (last !== undefined && at - last.at < 1_000) points[points.length - 1] = { at, value: depth };
    else points.push({ at, value: depth });
    while (points.length > 0 && points[0]!.at < at - KEEP_MS) points.shift();
    this.#samples.set(url, points);
  }
}
