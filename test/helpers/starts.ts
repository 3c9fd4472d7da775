/** Most of `starts` (ms since the epoch) in any `spanMs`: what a rate limit bounds. */
export function mostIn(starts: readonly number[], spanMs: number): number {
  const s = [...starts].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[i]! - s[j]! >= spanMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
