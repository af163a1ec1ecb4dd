/**
 * What the benchmarks time with: the median of a list, and the median time of a synchronous function over repeated
 * runs after one warm-up (process.hrtime, seconds). Medians because these machines are shared and noisy.
 */

/** The median of `xs` (the upper one of an even count); NaN-free input expected. */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Time `f` `runs` times (after one warm-up), returning the median in seconds and the last result. */
export function time<T>(f: () => T, runs: number): { s: number; result: T } {
  let result = f();
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    result = f();
    xs.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return { s: median(xs), result };
}
