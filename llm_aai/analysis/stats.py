"""Binomial confidence intervals for proportions of trials passed, and how every table shows them.

Wilson's score interval is used rather than the normal approximation because per-level samples
are tiny (12 trials) and often at 0 or 1, where the normal interval collapses to a point.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

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


NO_INTERVAL_OVER_TASKS = re.compile(r"tasks-(?=\s|$)", re.MULTILINE)
"""How a clustered rate over fewer than two tasks prints its missing interval, in a table."""


def no_interval_legend(*printed: str) -> str:
    """The words for ``tasks-``, to close a legend line, if a printed table shows it; else ''.

    The cell reads as a typo beside ``tasks[0.10, 0.40]`` unless the legend says what it is.
    """
    if not any(NO_INTERVAL_OVER_TASKS.search(text) for text in printed):
        return ""
    return ("; tasks- = no interval over tasks: the rate is over one task (resampling tasks "
            "needs two or more)")


def format_clustered_rate(passed: Sequence[float], tasks: Sequence[str],
                          settings: Bootstrap | None = None) -> str:
    """``k/n p [Wilson] tasks[cluster bootstrap]``, as the level tables print a rate.

    Args:
        passed: per episode, 1 (or True) for a pass, else 0.
        tasks: per episode, the task it clusters on (a variant's testbed task).
        settings: draws, seed and coverage of the bootstrap over tasks.

    Returns:
        ``-`` without episodes; the bootstrap part is ``tasks-`` with fewer than two tasks.
    """
    values = np.asarray(passed, dtype=float)
    if not len(values):
        return "-"
    labels, cluster = np.unique(np.asarray(tasks, dtype=object).astype(str), return_inverse=True)
    totals = np.bincount(cluster, weights=values, minlength=len(labels))
    counts = np.bincount(cluster, minlength=len(labels))
    over_tasks = cluster_bootstrap_interval(totals, counts, settings)
    return f"{format_rate(int(values.sum()), len(values))} tasks{format_interval(*over_tasks)}"


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


@dataclass(frozen=True)
class Bootstrap:
    """How a cluster-bootstrap interval is drawn; the same settings give the same interval.

    Attributes:
        draws: resamples of the tasks.
        seed: the resampling's seed (``analyze --seed``).
        level: the interval's coverage.
    """

    draws: int = 2000
    seed: int = 0
    level: float = 0.95

    def describe(self) -> str:
        """What a table's footnote says about the interval."""
        return (f"cluster bootstrap {self.level:.0%} over tasks ({self.draws} resamples of the "
                f"tasks, seed {self.seed})")


def cluster_bootstrap_interval(totals: Sequence[float], counts: Sequence[int],
                               settings: Bootstrap | None = None) -> tuple[float, float]:
    """Percentile interval of ``sum(totals) / sum(counts)`` with tasks resampled, not trials.

    Trials of one task share its difficulty, so they are not independent draws: resampling
    whole tasks (clusters) keeps that dependence, and the interval widens when tasks differ.

    Args:
        totals: per task, the sum of the episodes' values (passes, or progress).
        counts: per task, its episodes; tasks without any are left out.
        settings: draws, seed and coverage.

    Returns:
        ``(low, high)``; NaN with fewer than two tasks (one task says nothing about others).
    """
    settings = settings or DEFAULT_BOOTSTRAP
    total, count = _clusters(totals, counts)
    if len(count) < 2:
        return math.nan, math.nan
    picks = np.random.default_rng(settings.seed).integers(0, len(count),
                                                          size=(settings.draws, len(count)))
    ratios = total[picks].sum(axis=1) / count[picks].sum(axis=1)
    tail = (1 - settings.level) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class PairedDifference:
    """Run A minus run B over the tasks both played.

    Attributes:
        tasks: tasks in both runs.
        differing: those of them whose two sides differ (in total or in episodes): the only
            ones the sign-flip test flips, since a tie has no sign.
        rate_a: A's pooled rate over those tasks.
        rate_b: B's.
        difference: ``rate_a - rate_b``.
        low: the cluster-bootstrap interval's lower bound (tasks resampled in pairs).
        high: its upper bound.
        p_value: two-sided, from the paired sign-flip test over tasks.
        exact: whether the p-value enumerated every flip (up to ``EXACT_TASKS`` differing
            tasks).
    """

    tasks: int
    differing: int
    rate_a: float
    rate_b: float
    difference: float
    low: float
    high: float
    p_value: float
    exact: bool


DEFAULT_BOOTSTRAP = Bootstrap()
"""2000 resamples, seed 0, 95 %: what every table uses unless ``analyze --seed`` says else."""

EXACT_TASKS = 16
"""Up to this many differing tasks the sign-flip test enumerates all 2^tasks flips (65536)."""


def paired_difference(a_totals: Sequence[float], a_counts: Sequence[int],
                      b_totals: Sequence[float], b_counts: Sequence[int],
                      settings: Bootstrap | None = None) -> PairedDifference:
    """Difference of two runs' rates on the same tasks, its interval and a paired p-value.

    The test is a sign-flip (paired permutation) test over tasks: under the null hypothesis
    that A and B do equally well on every task, which run a task's episodes came from is
    exchangeable, so swapping A's and B's episodes of any subset of tasks gives a statistic
    as likely as the one observed. It keeps each task's trials together (tasks, not trials,
    are the independent units), needs no normal approximation, and takes unequal numbers of
    trials and several variants of one task. McNemar's test would need episodes paired one to
    one and would count every trial as independent. A task with the same total over as many
    episodes on both sides is a tie: it carries no sign and is not flipped (as the sign test
    and Wilcoxon's test drop zero differences). Swapping a tie leaves the statistic as it
    was, so the p-value is that of all 2^tasks flips, enumerated exactly up to
    ``EXACT_TASKS`` tasks that differ. (Equal rates over unequal numbers of episodes are no
    tie: the pooled rate weighs tasks by episodes, and swapping them moves it.)

    Args:
        a_totals: per task (in the same order for A and B), the sum of A's episode values.
        a_counts: A's episodes per task.
        b_totals: B's sums.
        b_counts: B's episodes per task.
        settings: bootstrap draws, seed and coverage; the seed also drives the sampled flips
            beyond ``EXACT_TASKS`` differing tasks.

    Raises:
        ValueError: the sequences differ in length, or no task has episodes on both sides.
    """
    settings = settings or DEFAULT_BOOTSTRAP
    arrays = [np.asarray(v, dtype=float) for v in (a_totals, a_counts, b_totals, b_counts)]
    if len({len(v) for v in arrays}) != 1:
        raise ValueError("A's and B's per-task sequences must have the same length")
    both = (arrays[1] > 0) & (arrays[3] > 0)
    ka, na, kb, nb = (v[both] for v in arrays)
    if not len(na):
        raise ValueError("no task has episodes in both runs")
    difference = ka.sum() / na.sum() - kb.sum() / nb.sum()
    rng = np.random.default_rng(settings.seed)
    low = high = math.nan
    if len(na) >= 2:
        picks = rng.integers(0, len(na), size=(settings.draws, len(na)))
        diffs = (ka[picks].sum(axis=1) / na[picks].sum(axis=1)
                 - kb[picks].sum(axis=1) / nb[picks].sum(axis=1))
        tail = (1 - settings.level) / 2
        low, high = (float(v) for v in np.quantile(diffs, [tail, 1 - tail]))
    # a task whose two sides are the same (a zero difference over as many episodes) carries
    # no sign: swapping it changes nothing, so only the others are flipped and counted
    # against EXACT_TASKS; the p-value is that of all 2^tasks flips, now exact more often
    tied = np.isclose(ka, kb, rtol=0.0, atol=1e-12) & (na == nb)
    signed = np.flatnonzero(~tied)
    exact = len(signed) <= EXACT_TASKS
    if exact:
        some = ((np.arange(2 ** len(signed))[:, None] >> np.arange(len(signed))) & 1)
    else:
        some = rng.integers(0, 2, size=(settings.draws * 5, len(signed)))
    flips = np.zeros((len(some), len(na)), dtype=bool)
    flips[:, signed] = some.astype(bool)
    flipped = (np.where(flips, kb, ka).sum(axis=1) / np.where(flips, nb, na).sum(axis=1)
               - np.where(flips, ka, kb).sum(axis=1) / np.where(flips, na, nb).sum(axis=1))
    extreme = int((np.abs(flipped) >= abs(difference) - 1e-12).sum())
    p_value = extreme / len(flips) if exact else (extreme + 1) / (len(flips) + 1)
    return PairedDifference(int(len(na)), int(len(signed)), float(ka.sum() / na.sum()),
                            float(kb.sum() / nb.sum()), float(difference), low, high,
                            float(min(p_value, 1.0)), exact)


def _clusters(totals: Sequence[float], counts: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    total, count = np.asarray(totals, dtype=float), np.asarray(counts, dtype=float)
    if total.shape != count.shape:
        raise ValueError("totals and counts must have one entry per task")
    keep = count > 0
    return total[keep], count[keep]
