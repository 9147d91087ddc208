#!/usr/bin/env python3
"""Reference values for src/stats, computed with SciPy and NumPy.

Run:  python3 scripts/reference/stats_reference.py > /tmp/stats_reference.json

Written against scipy 1.17.1 and numpy 2.4.6. Prints one JSON document whose
numbers are pasted into src/stats/*.test.ts (the tests do not need Python).
Every case lists its inputs next to its outputs so the tests can be checked
against this file by eye.

Calls used:
  * Welch t-test:    scipy.stats.ttest_ind(a, b, equal_var=False, alternative=...)
  * paired t-test:   scipy.stats.ttest_rel(a, b, alternative=...)
  * signed-rank:     scipy.stats.wilcoxon(a, b, alternative=...)  (defaults:
                     zero_method='wilcox', correction=False, method='auto')
  * Cohen's d:       (mean(a) - mean(b)) / pooled SD, numpy var(ddof=1)
  * Hedges' g:       d * (1 - 3 / (4 * (n1 + n2) - 9)); the exact gamma-function
                     J is printed alongside for comparison only
  * descriptive:     numpy mean, var(ddof=1), std(ddof=1), std(ddof=1)/sqrt(n)
  * bootstrap:       scipy.stats.bootstrap((x,), np.mean, method='percentile',
                     confidence_level=0.95, n_resamples=10000, rng=12345)
                     (loose comparison only: the random streams differ), and
                     the same percentile bootstrap re-implemented below on the
                     Mulberry32 stream (index = floor(u * n), sequential sums,
                     np.quantile(method='linear')), which the TypeScript
                     bootstrapCI must reproduce exactly
  * Fisher's exact:  scipy.stats.fisher_exact(table, alternative=...)
  * McNemar exact:   scipy.stats.binomtest(b, b + c, 0.5, alternative=...) on
                     the discordant pairs of paired 0/1 outcomes (b = first
                     right and second wrong, c = the reverse)
  * Mulberry32:      re-implemented below from
                     https://github.com/bryc/code/blob/master/jshash/PRNGs.md
"""
import json
import math
import sys
import warnings

import numpy as np
import scipy
import scipy.special
import scipy.stats as stats

warnings.simplefilter("ignore")  # scipy warns about small n for wilcoxon

ALTERNATIVES = ["two-sided", "greater", "less"]


def f(x):
    """A float as JSON can carry it (repr round-trips float64)."""
    return float(x)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

# A fixed pseudo-random sample, printed in full so the tests can copy it.
rng = np.random.default_rng(20240611)
large_a = np.round(rng.normal(0.72, 0.05, 40), 4).tolist()
large_b = np.round(rng.normal(0.70, 0.09, 25), 4).tolist()

WELCH_CASES = {
    "unequal_sizes_and_variances": (
        [12.1, 14.3, 11.8, 15.2, 13.9, 12.7, 14.8],
        [10.2, 16.5, 9.1, 18.3, 11.7, 13.0, 8.4, 17.6, 12.2, 15.9, 10.8],
    ),
    "small_clear_difference": ([1, 2, 3], [4, 5, 6, 7, 8]),
    "one_group_constant": ([5, 5, 5, 5], [4.1, 5.2, 3.9, 4.8, 5.5]),
    "large_random": (large_a, large_b),
}

PAIRED_CASES = {
    "scores_eight_examples": (
        [0.62, 0.71, 0.55, 0.80, 0.67, 0.74, 0.59, 0.66],
        [0.58, 0.69, 0.57, 0.71, 0.60, 0.70, 0.61, 0.62],
    ),
    "three_pairs": ([3.0, 4.5, 2.0], [2.5, 4.0, 2.75]),
    "large_random": (large_a[:25], large_b),
}

# Paired differences are built from a and b exactly as the TypeScript code
# does (d = a - b in float64). The inputs below are multiples of 1/8, so every
# difference is exact and ties/zeros are exactly what they appear to be.


def distinct_pairs(n, zero_indices=()):
    """n pairs whose nonzero differences have distinct magnitudes k/8."""
    b = [i / 4 for i in range(n)]
    a = []
    for i in range(n):
        if i in zero_indices:
            a.append(b[i])
            continue
        magnitude = ((i * 23) % 53 + 1) / 8  # distinct for i < 53
        sign = -1 if (i * 7) % 5 < 2 else 1
        a.append(b[i] + sign * magnitude)
    return a, b


def tied_pairs(n):
    """n pairs with integer differences in [-3, 4]: many ties, some zeros."""
    b = [float((i * 5) % 9) for i in range(n)]
    a = [b[i] + float((i * 11) % 8 - 3) for i in range(n)]
    return a, b


WILCOXON_CASES = {
    # n <= 50, no ties, no zeros -> exact distribution
    "exact_no_ties_n10": (
        [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30, 2.01],
        [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29, 1.71],
    ),
    "exact_no_ties_n4": ([1, 2, 3, 4], [0.5, 2.25, 2.0, 1.0]),
    # n <= 13 with ties or zeros -> exact sign-flip (permutation) distribution
    "small_with_zeros_n9": (
        [5, 7, 3, 8, 6, 9, 4, 6, 7],
        [5, 4, 3, 6, 7, 5, 2, 6, 3],
    ),
    "small_with_ties_n8": (
        [2, 4, 6, 1, 9, 3, 5, 8],
        [1, 2, 4, 2, 6, 1, 7, 5],
    ),
    # 13 < n <= 50 with ties/zeros -> normal approximation, tie-corrected
    "medium_ties_and_zeros_n20": (
        [3, 5, 2, 6, 4, 4, 7, 3, 5, 6, 2, 8, 4, 5, 3, 6, 7, 4, 5, 3],
        [2, 5, 3, 4, 2, 4, 5, 1, 5, 3, 2, 5, 3, 2, 3, 4, 4, 2, 6, 1],
    ),
    # n <= 50 without ties -> exact even for n = 30
    "exact_no_ties_n30": (
        [round(0.1 * i + (0.37 * i * i) % 1.3, 6) for i in range(1, 31)],
        [round(0.1 * i + 0.55 - 0.0001 * i, 6) for i in range(1, 31)],
    ),
    # the exact/asymptotic boundary at n = 50 (no ties, no zeros)
    "exact_no_ties_n50": distinct_pairs(50),
    "asymptotic_no_ties_n51": distinct_pairs(51),
    # n counts zeros: 53 pairs, 3 zeros, 50 distinct nonzero -> asymptotic
    "asymptotic_n53_three_zeros": distinct_pairs(53, zero_indices=(4, 20, 41)),
    # n > 50 with many ties and zeros -> tie-corrected normal approximation
    "asymptotic_ties_and_zeros_n60": tied_pairs(60),
}

EFFECT_CASES = {
    "unequal_sizes_and_variances": WELCH_CASES["unequal_sizes_and_variances"],
    "small_clear_difference": WELCH_CASES["small_clear_difference"],
    "large_random": WELCH_CASES["large_random"],
}

DESCRIPTIVE_CASES = {
    "small": [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0],
    "large_random": large_a,
}

# Deterministic, integer-built, roughly bell-shaped sample (sum of two
# sawtooth sequences); reproducible exactly in TypeScript.
BOOTSTRAP_VALUES = [((i * 37) % 101 + (i * 53) % 103) / 10 for i in range(200)]


# ---------------------------------------------------------------------------
# Computations
# ---------------------------------------------------------------------------

def welch(a, b):
    out = {"a": a, "b": b}
    for alt in ALTERNATIVES:
        r = stats.ttest_ind(a, b, equal_var=False, alternative=alt)
        out[alt] = {"t": f(r.statistic), "df": f(r.df), "pValue": f(r.pvalue)}
    return out


def paired(a, b):
    out = {"a": a, "b": b}
    for alt in ALTERNATIVES:
        r = stats.ttest_rel(a, b, alternative=alt)
        out[alt] = {"t": f(r.statistic), "df": f(r.df), "pValue": f(r.pvalue)}
    return out


def wilcoxon(a, b):
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    nonzero = d[d != 0]
    has_ties = len(np.unique(np.abs(nonzero))) < len(nonzero)
    out = {
        "a": a,
        "b": b,
        "n": len(d),
        "zeros": int(np.sum(d == 0)),
        "hasTies": bool(has_ties),
    }
    for alt in ALTERNATIVES:
        r = stats.wilcoxon(a, b, alternative=alt)
        out[alt] = {"statistic": f(r.statistic), "pValue": f(r.pvalue)}
    return out


def effect(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n1, n2 = len(a), len(b)
    pooled = math.sqrt(((n1 - 1) * a.var(ddof=1) + (n2 - 1) * b.var(ddof=1)) / (n1 + n2 - 2))
    d = (a.mean() - b.mean()) / pooled
    df = n1 + n2 - 2
    j_approx = 1 - 3 / (4 * (n1 + n2) - 9)
    j_exact = math.exp(
        scipy.special.gammaln(df / 2) - math.log(math.sqrt(df / 2)) - scipy.special.gammaln((df - 1) / 2)
    )
    return {
        "a": a.tolist(),
        "b": b.tolist(),
        "cohensD": f(d),
        "hedgesG": f(d * j_approx),
        "hedgesGExactJ": f(d * j_exact),
    }


def descriptive(x):
    x = np.asarray(x, dtype=float)
    return {
        "values": x.tolist(),
        "mean": f(x.mean()),
        "variance": f(x.var(ddof=1)),
        "standardDeviation": f(x.std(ddof=1)),
        "standardError": f(x.std(ddof=1) / math.sqrt(len(x))),
    }


def mulberry32(seed):
    """Mulberry32 (Tommy Ettinger, public domain) on unsigned 32-bit ints."""
    state = seed % 2**32
    mask = 0xFFFFFFFF

    def next_value():
        nonlocal state
        state = (state + 0x6D2B79F5) & mask
        t = ((state ^ (state >> 15)) * (state | 1)) & mask
        t = ((t + (((t ^ (t >> 7)) * (t | 61)) & mask)) & mask) ^ t
        return ((t ^ (t >> 14)) & mask) / 4294967296

    return next_value


def first_outputs(seed, count):
    random = mulberry32(seed)
    return [random() for _ in range(count)]


def mulberry32_percentile_bootstrap(values, seed, confidence, resamples):
    random = mulberry32(seed)
    n = len(values)
    means = []
    for _ in range(resamples):
        total = 0.0
        for _ in range(n):
            total += values[math.floor(random() * n)]
        means.append(total / n)
    tail = (1 - confidence) / 2
    low, high = np.quantile(np.asarray(means), [tail, 1 - tail], method="linear")
    return {"low": f(low), "high": f(high)}


def bootstrap(values):
    x = np.asarray(values, dtype=float)
    r = stats.bootstrap(
        (x,), np.mean, method="percentile", confidence_level=0.95, n_resamples=10000, rng=12345
    )
    return {
        "mean": f(x.mean()),
        "standardError": f(x.std(ddof=1) / math.sqrt(len(x))),
        "scipyLow": f(r.confidence_interval.low),
        "scipyHigh": f(r.confidence_interval.high),
        "mulberry32Seed2024": mulberry32_percentile_bootstrap(values, 2024, 0.95, 10000),
        "mulberry32Seed7Confidence90Resamples500": mulberry32_percentile_bootstrap(
            values, 7, 0.90, 500
        ),
    }


FISHER_CASES = {
    "candidate_worse": [[10, 240], [2, 498]],
    "slightly_worse": [[5, 245], [2, 498]],
    "noise": [[3, 247], [1, 499]],
    "equal": [[2, 48], [2, 48]],
    "small_table": [[7, 3], [2, 8]],
    "first_better": [[1, 99], [9, 91]],
}


def fisher(table):
    out = {"table": table}
    for alternative in ALTERNATIVES:
        r = stats.fisher_exact(table, alternative=alternative)
        out[alternative] = {"oddsRatio": f(r.statistic), "pValue": f(r.pvalue)}
    return out


# Paired 0/1 outcomes (candidate, incumbent) on the same examples, built from
# counts so the tests can rebuild the same vectors: both right, b (candidate
# right, incumbent wrong), c (the reverse), both wrong.
MCNEMAR_CASES = {
    "candidate_better": (30, 9, 2, 19),
    "candidate_worse": (25, 1, 7, 27),
    "no_difference": (40, 5, 5, 10),
    "one_discordant": (10, 1, 0, 9),
    "large_clear": (120, 40, 18, 22),
    "large_borderline": (300, 31, 19, 50),
    "tiny_p_value": (0, 60, 0, 0),
    "odd_total": (3, 4, 3, 1),
}


def mcnemar(both_right, b, c, both_wrong):
    out = {"bothRight": both_right, "b": b, "c": c, "bothWrong": both_wrong}
    for alternative in ALTERNATIVES:
        r = stats.binomtest(b, b + c, 0.5, alternative=alternative)
        out[alternative] = {"statistic": int(r.k), "n": int(r.n), "pValue": f(r.pvalue)}
    return out


result = {
    "versions": {"scipy": scipy.__version__, "numpy": np.__version__},
    "welch": {k: welch(*v) for k, v in WELCH_CASES.items()},
    "paired": {k: paired(*v) for k, v in PAIRED_CASES.items()},
    "wilcoxon": {k: wilcoxon(*v) for k, v in WILCOXON_CASES.items()},
    "effectSize": {k: effect(*v) for k, v in EFFECT_CASES.items()},
    "descriptive": {k: descriptive(v) for k, v in DESCRIPTIVE_CASES.items()},
    "bootstrap": bootstrap(BOOTSTRAP_VALUES),
    "fisher": {k: fisher(v) for k, v in FISHER_CASES.items()},
    "mcnemar": {k: mcnemar(*v) for k, v in MCNEMAR_CASES.items()},
    "mulberry32": {str(seed): first_outputs(seed, 5) for seed in (0, 1, 12345, 2**32 + 12345, -1)},
}

json.dump(result, sys.stdout, indent=2)
sys.stdout.write("\n")
