/**
 * The cumulative distribution functions behind kloop's tests, from stdlib
 * (`@stdlib/stats-base-dists-t-cdf`, `@stdlib/stats-base-dists-normal-cdf`).
 *
 * Each package is loaded on its first call (CommonJS, through `require`):
 * importing both costs about 0.1 s, which commands that compute no p-value
 * (`kloop status`, `kloop history`) do not pay.
 *
 * @module
 */
import { createRequire } from 'node:module';

type StudentTCdf = (x: number, degreesOfFreedom: number) => number;
type NormalCdf = (x: number, mean: number, standardDeviation: number) => number;

const load = createRequire(import.meta.url);
let studentT: StudentTCdf | undefined;
let normal: NormalCdf | undefined;

/** P(T ≤ x) for Student's t with `degreesOfFreedom` > 0 (stdlib's `t/cdf`). */
export function studentTCdf(x: number, degreesOfFreedom: number): number {
  studentT ??= load('@stdlib/stats-base-dists-t-cdf') as StudentTCdf;
  return studentT(x, degreesOfFreedom);
}

/** P(X ≤ x) for a normal distribution N(mean, standardDeviation²) (stdlib's `normal/cdf`). */
export function normalCdf(x: number, mean: number, standardDeviation: number): number {
  normal ??= load('@stdlib/stats-base-dists-normal-cdf') as NormalCdf;
  return normal(x, mean, standardDeviation);
}
