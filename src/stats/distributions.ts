/**
 * The cumulative distribution functions behind kloop's tests, from stdlib
 * (`@stdlib/stats-base-dists-t-cdf`, `@stdlib/stats-base-dists-normal-cdf`,
 * `@stdlib/stats-base-dists-binomial-cdf`,
 * `@stdlib/stats-base-dists-hypergeometric-cdf`,
 * `@stdlib/stats-base-dists-chisquare-cdf`).
 *
 * Each package is loaded on its first call (CommonJS, through `require`):
 * each is some hundred small CommonJS files, and importing them all costs
 * about 0.2 s, which commands that compute no p-value (`kloop status`,
 * `kloop history`) do not pay.
 *
 * @module
 */
import { createRequire } from 'node:module';

type StudentTCdf = (x: number, degreesOfFreedom: number) => number;
type NormalCdf = (x: number, mean: number, standardDeviation: number) => number;
type BinomialCdf = (x: number, trials: number, successProbability: number) => number;
type HypergeometricCdf = (x: number, population: number, successes: number, draws: number) => number;
type ChiSquareCdf = (x: number, degreesOfFreedom: number) => number;

const load = createRequire(import.meta.url);
let studentT: StudentTCdf | undefined;
let normal: NormalCdf | undefined;
let binomial: BinomialCdf | undefined;
let hypergeometric: HypergeometricCdf | undefined;
let chiSquare: ChiSquareCdf | undefined;

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

/** P(X ≤ x) for X ~ Binomial(trials, successProbability) (stdlib's `binomial/cdf`). */
export function binomialCdf(x: number, trials: number, successProbability: number): number {
  binomial ??= load('@stdlib/stats-base-dists-binomial-cdf') as BinomialCdf;
  return binomial(x, trials, successProbability);
}

/** P(X ≤ x) for X ~ Hypergeometric(population, successes, draws) (stdlib's `hypergeometric/cdf`: `draws` drawn without replacement from `population` items of which `successes` count). */
export function hypergeometricCdf(x: number, population: number, successes: number, draws: number): number {
  hypergeometric ??= load('@stdlib/stats-base-dists-hypergeometric-cdf') as HypergeometricCdf;
  return hypergeometric(x, population, successes, draws);
}

/** P(X ≤ x) for X ~ χ² with `degreesOfFreedom` > 0 (stdlib's `chisquare/cdf`). */
export function chiSquareCdf(x: number, degreesOfFreedom: number): number {
  chiSquare ??= load('@stdlib/stats-base-dists-chisquare-cdf') as ChiSquareCdf;
  return chiSquare(x, degreesOfFreedom);
}
