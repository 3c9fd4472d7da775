/** Which items a contender has finished, and how many times each one was handled. */
export class Tally {
  readonly #runs = new Map<number, number>();
  #lastAt = 0;

  constructor(readonly expected: number) {}

  done(seq: number): void {
    this.#runs.set(seq, (this.#runs.get(seq) ?? 0) + 1);
    this.#lastAt = performance.now();
  }

  get finished(): number {
    return this.#runs.size;
  }

  get complete(): boolean {
    return this.#runs.size >= this.expected;
  }

  /** performance.now() when the last item was finished. */
  get lastAt(): number {
    return this.#lastAt;
  }

  /** Items handled more than once. */
  get repeated(): number {
    let n = 0;
    for (const runs of this.#runs.values()) if (runs > 1) n++;
    return n;
  }
}
