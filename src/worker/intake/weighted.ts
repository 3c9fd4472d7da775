/** Something that may have work waiting, with a weight and a running credit. */
export interface Weighted {
  readonly weight: number;
  credit: number;
}

/**
 * Smooth weighted round-robin: among the candidates that have work, add each one's weight to its
 * credit, take the one with the most, and charge it the total. Over any window, queues are taken
 * in proportion to their weights, interleaved rather than in runs.
 */
export function pickWeighted<T extends Weighted>(candidates: readonly T[]): T | undefined {
  if (candidates.length === 0) return undefined;
  let total = 0;
  let best = candidates[0]!;
  for (const c of candidates) {
    total += c.weight;
    c.credit += c.weight;
    if (c.credit > best.credit) best = c;
  }
  best.credit -= total;
  return best;
}
