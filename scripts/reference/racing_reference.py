#!/usr/bin/env python3
"""Reference values for the racing statistics of src/stats, with SciPy and NumPy.

Run:  python3 scripts/reference/racing_reference.py

Written against scipy 1.17.1 and numpy 2.4.6. Prints one JSON document whose
numbers are pasted into src/stats/betting-confidence-sequence.test.ts and
src/stats/predictive-power.test.ts (the tests do not need Python).

Calls used:
  * normal quantile:  scipy.stats.norm.ppf(p)
  * predictive power: scipy.stats.norm.cdf((mean - c) / sqrt(v (N - m) / (N m)))
                      (Spiegelhalter, Freedman & Blackburn 1986, flat prior)
  * hedged capital:   Waudby-Smith & Ramdas (2024), hedged capital with
                      predictable plug-in bets, written here with NumPy
                      cumulative sums and products straight from the paper:
                      lambda_t = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1+t))),
                      mu_t = (1/2 + sum x) / (t + 1),
                      sigma2_t = (1/4 + sum (x_i - mu_i)^2) / (t + 1), sigma2_0 = 1/4,
                      K+ = prod(1 + min(lambda, c/m)(x - m)),
                      K- = prod(1 - min(lambda, c/(1-m))(x - m)),
                      K = max(theta K+, (1 - theta) K-)
  * bounds:           the running intersection {m : K_s(m) < 1/alpha for all s <= t}
                      on a grid of 200001 points of [0, 1] (step 5e-6)
"""
import json
import math
import sys

import numpy as np
import scipy
import scipy.stats as stats


def f(x):
    return float(x)


def bets(x, alpha):
    x = np.asarray(x, dtype=float)
    t = np.arange(1, len(x) + 1)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    sigma2_prev = np.append(0.25, sigma2[:-1])
    return np.sqrt(2 * np.log(2 / alpha) / (sigma2_prev * t * np.log(1 + t)))


def capital(x, m, alpha=0.05, c=0.5, theta=0.5):
    x = np.asarray(x, dtype=float)
    lam = bets(x, alpha)
    up_cap = c / m if m > 0 else math.inf
    down_cap = c / (1 - m) if m < 1 else math.inf
    up = np.cumprod(1 + np.minimum(lam, up_cap) * (x - m))
    down = np.cumprod(1 - np.minimum(lam, down_cap) * (x - m))
    return np.maximum(theta * up, (1 - theta) * down)


def bounds(x, alpha=0.05, c=0.5, theta=0.5):
    grid = np.linspace(0, 1, 200001)
    inside = np.array([np.all(capital(x, m, alpha, c, theta) < 1 / alpha) for m in grid])
    where = np.where(inside)[0]
    return {"lower": f(grid[where[0]]), "upper": f(grid[where[-1]])}


rng = np.random.default_rng(20261215)
sample_40 = np.round(rng.beta(6, 4, 40), 4).tolist()
sample_12 = [0.62, 0.71, 0.55, 0.8, 0.67, 0.74, 0.59, 0.66, 0.7, 0.64, 0.69, 0.73]

PREDICTIVE_CASES = [
    {"mean": 0.0, "variance": 0.01, "observed": 40, "planned": 200, "critical": 0.02},
    {"mean": 0.015, "variance": 0.0104, "observed": 80, "planned": 200, "critical": 0.016},
    {"mean": -0.01, "variance": 0.02, "observed": 20, "planned": 250, "critical": 0.012},
    {"mean": 0.05, "variance": 0.0064, "observed": 150, "planned": 200, "critical": 0.01},
]


def predictive(case):
    spread = math.sqrt(case["variance"] * (case["planned"] - case["observed"]) / (case["planned"] * case["observed"]))
    return {**case, "power": f(stats.norm.cdf((case["mean"] - case["critical"]) / spread))}


result = {
    "versions": {"scipy": scipy.__version__, "numpy": np.__version__},
    "normalQuantile": {str(p): f(stats.norm.ppf(p)) for p in (0.5, 0.8, 0.9, 0.95, 0.975, 0.99, 0.01, 0.2)},
    "predictivePower": [predictive(case) for case in PREDICTIVE_CASES],
    "bets": {"sample": sample_12, "alpha": 0.05, "bets": [f(v) for v in bets(sample_12, 0.05)]},
    "capital": {
        "sample": sample_12,
        "cases": [
            {"m": m, "alpha": a, "truncation": c, "theta": th, "capital": [f(v) for v in capital(sample_12, m, a, c, th)]}
            for (m, a, c, th) in [(0.5, 0.05, 0.5, 0.5), (0.75, 0.05, 0.5, 0.5), (0.68, 0.1, 0.75, 0.5), (0.6, 0.05, 0.5, 1.0)]
        ],
    },
    "bounds": {
        "sample12": {"sample": sample_12, "alpha": 0.05, **bounds(sample_12, 0.05)},
        "sample40": {"sample": sample_40, "alpha": 0.05, **bounds(sample_40, 0.05)},
        "sample40_alpha20": {"sample": sample_40, "alpha": 0.2, **bounds(sample_40, 0.2)},
    },
}
json.dump(result, sys.stdout, indent=2)
sys.stdout.write("\n")
