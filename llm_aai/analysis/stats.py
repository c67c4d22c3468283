"""Binomial confidence intervals for proportions of trials passed, and how every table shows them.

Wilson's score interval is used rather than the normal approximation because per-level samples
are tiny (12 trials) and often at 0 or 1, where the normal interval collapses to a point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z_95 = 1.959963984540054  # two-sided 95% standard normal quantile


def wilson_interval(k: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes out of ``n`` trials.

    Args:
        k: successes, ``0 <= k <= n``.
        n: trials; with ``n == 0`` nothing is known and both bounds are NaN.
        z: the normal quantile (1.96 for 95%).

    Returns:
        ``(low, high)``, clipped to ``[0, 1]``.

    """
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return math.nan, math.nan
    p = k / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    low = 0.0 if k == 0 else max(0.0, centre - half)  # exact ends, not rounding noise
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def format_interval(low: float, high: float) -> str:
    """An interval as every table prints it: ``[0.14, 0.40]`` (a dash could read as minus).

    An unknown bound (NaN: no trials) prints as ``-``, as the tables print unknown values.
    """
    if math.isnan(low) or math.isnan(high):
        return "-"
    return f"[{low:.2f}, {high:.2f}]"


def format_rate(k: int, n: int) -> str:
    """``k/n proportion [Wilson 95% interval]``, e.g. ``3/12 0.25 [0.09, 0.53]``; ``-`` if n = 0."""
    if not n:
        return "-"
    return f"{k}/{n} {k / n:.2f} {format_interval(*wilson_interval(k, n))}"


def bootstrap_mean_interval(values: Sequence[float], *, draws: int = 2000, seed: int = 0,
                            level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``, one value per cluster.

    Repeated trials of one task are not independent, so an interval for a pass rate resamples
    tasks, not trials: give each task's mean over its trials (a cluster bootstrap).

    Args:
        values: one number per cluster (a task's pass rate over its trials).
        draws: bootstrap resamples.
        seed: the resampling's seed (the same values give the same interval).
        level: the interval's coverage.

    Returns:
        ``(low, high)``; both NaN without values.

    """
    if not values:
        return math.nan, math.nan
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(draws, len(data)))].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)
