/** Heap per held item: the least-squares slope through readings at several levels (fixed costs drop out). */

export interface HeapPoint {
  readonly held: number;
  readonly heapUsed: number;
}

/** The slope of the least-squares line through `points` (heap bytes against items held). */
export function leastSquaresSlope(points: readonly HeapPoint[]): number {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.held, 0) / n;
  const my = points.reduce((a, p) => a + p.heapUsed, 0) / n;
  const sxy = points.reduce((a, p) => a + (p.held - mx) * (p.heapUsed - my), 0);
  const sxx = points.reduce((a, p) => a + (p.held - mx) ** 2, 0);
  return sxy / sxx;
}

/** The least of `readings` heap readings, each after a full GC (needs node --expose-gc). */
export function leastHeapAfterGc(readings = 5): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < readings; i++) {
    gc?.();
    least = Math.min(least, process.memoryUsage().heapUsed);
  }
  return least;
}
