import { EventEmitter } from 'node:events';

type Listener<Args extends unknown[]> = (...args: Args) => void;

/**
 * A typed event emitter whose emit never throws: a listener that throws (or rejects) is reported
 * to `onListenerError` and the loop that emitted goes on.
 */
export class SafeEmitter<Events extends { [K in keyof Events]: unknown[] }> {
  readonly #emitter = new EventEmitter();
  readonly #onListenerError: (error: unknown, event: string) => void;

  constructor(onListenerError: (error: unknown, event: string) => void) {
    this.#onListenerError = onListenerError;
    this.#emitter.setMaxListeners(100);
  }

  on<K extends keyof Events & string>(event: K, listener: Listener<Events[K]>): this {
    this.#emitter.on(event, listener as Listener<unknown[]>);
    return this;
  }

  once<K extends keyof Events & string>(event: K, listener: Listener<Events[K]>): this {
    this.#emitter.once(event, listener as Listener<unknown[]>);
    return this;
  }

  off<K extends keyof Events & string>(event: K, listener: Listener<Events[K]>): this {
    this.#emitter.off(event, listener as Listener<unknown[]>);
    return this;
  }

  emit<K extends keyof Events & string>(event: K, ...args: Events[K]): void {
    // rawListeners: calling a `once` wrapper is what removes it.
    for (const listener of this.#emitter.rawListeners(event) as Listener<Events[K]>[]) {
      try {
        const result = listener(...args) as unknown;
        if (result instanceof Promise) result.catch((error: unknown) => this.#onListenerError(error, event));
      } catch (error) {
        this.#onListenerError(error, event);
      }
    }
  }

  listenerCount(event: keyof Events & string): number {
    return this.#emitter.listenerCount(event);
  }
}

/**
 * A class whose instances emit typed events through a SafeEmitter: on, off and once for its users,
 * `events.emit` for itself.
 */
export class EventSource<Events extends { [K in keyof Events]: unknown[] }> {
  protected readonly events: SafeEmitter<Events>;

  constructor(onListenerError: (error: unknown, event: string) => void) {
    this.events = new SafeEmitter(onListenerError);
  }

  /** Call `listener` on every `event`; one that throws or rejects is logged, and the worker goes on. Returns `this`. */
  on<K extends keyof Events & string>(event: K, listener: Listener<Events[K]>): this {
    this.events.on(event, listener);
    return this;
  }

  /** Remove `listener`, added with `on` or `once`, from `event`. Returns `this`. */
  off<K extends keyof Events & string>(event: K, listener: Listener<Events[K]>): this {
    this.events.off(event, listener);
    return this;
  }

  /** Call `listener` on the next `event` only, as `on` does, then remove it. Returns `this`. */
  once<K extends keyof Events & string>(event: K, listener: Listener<Events[K]>): this {
    this.events.once(event, listener);
    return this;
  }
}
