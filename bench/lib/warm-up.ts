/**
 * A warm-up before anything is measured. A fresh JVM (ElasticMQ, DynamoDB Local) compiles its hot
 * code for its first 40 s or so of load: its C2 compiler keeps most of a core busy, and each call
 * costs it 2-4x what it costs later (DynamoDB Local: 3.9 ms of CPU per status write in its first
 * 5 s, 0.85 ms after 30 s). On shared cores that CPU is taken from whatever is measured first.
 * Runs `round` for at least `minMs`, and until a round is no longer 10% faster than the one before
 * or `maxMs` has passed; answers each round's milliseconds. A round that answers a number is judged
 * by it (the milliseconds of the part that counts), else by its whole time.
 */
export async function untilSteady(round: () => Promise<unknown>, minMs: number, maxMs: number): Promise<number[]> {
  const startedAt = performance.now();
  const rounds: number[] = [];
  while (performance.now() - startedAt < maxMs) {
    const t0 = performance.now();
    const judged = await round();
    rounds.push(typeof judged === 'number' ? judged : performance.now() - t0);
    const [before, last] = rounds.slice(-2);
    if (performance.now() - startedAt >= minMs && before !== undefined && last! > 0.9 * before) break;
  }
  return rounds;
}
