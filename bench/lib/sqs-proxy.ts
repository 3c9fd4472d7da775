import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Faults to inject, each a probability per request (0..1). */
export interface FaultPlan {
  /** Drop the connection without an answer. */
  readonly resetRate?: number;
  /** Answer 500 or 503 without forwarding. */
  readonly errorRate?: number;
  /** Hold the request this long before forwarding. */
  readonly latencyRate?: number;
  readonly latencyMs?: number;
}

/** A small deterministic PRNG (mulberry32), so a fault run can be repeated. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * An HTTP proxy on 127.0.0.1 in front of an SQS server: counts every call by action (the JSON
 * protocol's X-Amz-Target, or the query protocol's Action) and injects the faults of its plan.
 */
export class SqsProxy {
  readonly #server: Server;
  readonly #target: URL;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 256 });
  readonly #sockets = new Set<Socket>();
  readonly #random: () => number;
  #plan: FaultPlan = {};
  #counts = new Map<string, number>();
  readonly injected = { resets: 0, errors: 0, delays: 0 };
  port = 0;
  /** TCP connections the clients opened to the proxy since the last resetCounts(). */
  connectionsOpened = 0;

  private constructor(target: string, random: () => number) {
    this.#target = new URL(target);
    this.#random = random;
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      this.connectionsOpened++;
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(target: string, seed = 1): Promise<SqsProxy> {
    const proxy = new SqsProxy(target, seededRandom(seed));
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    proxy.port = (proxy.#server.address() as { port: number }).port;
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  setPlan(plan: FaultPlan): void {
    this.#plan = plan;
  }

  counts(): Record<string, number> {
    return Object.fromEntries([...this.#counts].sort());
  }

  total(filter: (action: string) => boolean = () => true): number {
    let n = 0;
    for (const [action, count] of this.#counts) if (filter(action)) n += count;
    return n;
  }

  resetCounts(): void {
    this.#counts = new Map();
    this.connectionsOpened = 0;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.#agent.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const target = req.headers['x-amz-target'];
    const action =
      typeof target === 'string'
        ? (target.split('.').pop() ?? 'Unknown')
        : (new URLSearchParams(body.toString()).get('Action') ?? 'Unknown');
    this.#counts.set(action, (this.#counts.get(action) ?? 0) + 1);

    const p = this.#plan;
    if (p.resetRate && this.#random() < p.resetRate) {
      this.injected.resets++;
      req.socket.destroy();
      return;
    }
    if (p.errorRate && this.#random() < p.errorRate) {
      this.injected.errors++;
      const status = this.#random() < 0.5 ? 500 : 503;
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ __type: status === 500 ? 'InternalError' : 'ServiceUnavailable', message: 'injected by the fault proxy' }));
      return;
    }
    if (p.latencyRate && this.#random() < p.latencyRate) {
      this.injected.delays++;
      await new Promise((r) => setTimeout(r, p.latencyMs ?? 1_000));
    }
    const upstream = request(
      {
        host: this.#target.hostname,
        port: this.#target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: this.#target.host },
        agent: this.#agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    // The client went away before the answer (an aborted long poll): stop forwarding too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  }
}
