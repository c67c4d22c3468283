import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llm_aai.analysis import wilson_interval
from llm_aai.analysis.stats import Z_95, bootstrap_mean_interval


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (score interval)
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
    (5, 10, 0.2366, 0.7634),
])
def test_known_values(k, n, low, high):
    assert wilson_interval(k, n) == pytest.approx((low, high), abs=5e-5)


def test_closed_forms_at_the_ends():
    z2 = Z_95**2
    for n in (1, 3, 12, 40, 400):
        assert wilson_interval(0, n)[1] == pytest.approx(z2 / (n + z2))
        assert wilson_interval(n, n)[0] == pytest.approx(n / (n + z2))


def test_no_trials_is_unknown_and_bad_counts_are_refused():
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    with pytest.raises(ValueError, match="k=5, n=3"):
        wilson_interval(5, 3)
    with pytest.raises(ValueError):
        wilson_interval(-1, 3)


@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_bounds_solve_the_score_equation(kn):
    """Each bound p is a root of (k/n - p)^2 = z^2 p (1 - p) / n, unless clipped at 0 or 1."""
    k, n = kn
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0
    for p in (low, high):
        if 0.0 < p < 1.0:
            assert (k / n - p) ** 2 == pytest.approx(Z_95**2 * p * (1 - p) / n, rel=1e-6,
                                                      abs=1e-12)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_symmetric_in_successes_and_failures(kn):
    k, n = kn
    low, high = wilson_interval(k, n)
    mirror_low, mirror_high = wilson_interval(n - k, n)
    assert low == pytest.approx(1 - mirror_high, abs=1e-12)
    assert high == pytest.approx(1 - mirror_low, abs=1e-12)


def test_every_table_prints_intervals_one_way():
    from llm_aai.analysis import probes, report, variants
    from llm_aai.analysis.stats import (
        DEFAULT_BOOTSTRAP,
        cluster_bootstrap_interval,
        format_clustered_rate,
        format_interval,
        format_rate,
    )

    assert format_interval(0.14, 0.4) == "[0.14, 0.40]"
    assert format_interval(math.nan, math.nan) == "-"
    assert format_rate(3, 12) == "3/12 0.25 [0.09, 0.53]" and format_rate(0, 0) == "-"
    import pandas as pd

    # 12 trials of 4 tasks, 3 passed, all on the first task
    tasks = [t for t in ("01-04-03", "01-06-02", "01-21-01", "01-23-01") for _ in range(3)]
    passed = [True] * 3 + [False] * 9
    low, high = cluster_bootstrap_interval([3, 0, 0, 0], [3, 3, 3, 3], DEFAULT_BOOTSTRAP)
    cell = f"3/12 0.25 [0.09, 0.53] tasks{format_interval(low, high)}"
    assert format_clustered_rate(passed, tasks) == cell
    row = {"n": 12, "k": 3, "infra_failures": 0, "proportion": 0.25, "ci_low": 0.0893,
           "ci_high": 0.5323, "boot_low": low, "boot_high": high}
    assert report._rate(row) == cell
    group = pd.DataFrame({"infra_failure": [False] * 12, "passed": passed, "task_id": tasks})
    assert probes._cell(group, DEFAULT_BOOTSTRAP) == cell
    originals = group.assign(label="m", level=1, parent_task=None)
    played = pd.concat([originals, originals.assign(task_id=originals["task_id"] + "-v1",
                                                    parent_task=originals["task_id"])])
    both = variants.variants_table(played).iloc[0]
    assert both["original"] == both["variant"] == cell


def test_bootstrap_interval_over_tasks():
    per_task = [0.0, 1.0, 1 / 3, 2 / 3, 1.0, 0.0, 0.0, 1.0]
    low, high = bootstrap_mean_interval(per_task)
    mean = sum(per_task) / len(per_task)
    assert 0.0 <= low < mean < high <= 1.0
    assert bootstrap_mean_interval(per_task) == (low, high)  # seeded: reproducible
    assert bootstrap_mean_interval([0.5] * 6) == (0.5, 0.5)
    # more tasks with the same spread: a narrower interval
    wide = high - low
    low8, high8 = bootstrap_mean_interval(per_task * 8)
    assert high8 - low8 < wide / 2
    assert all(math.isnan(b) for b in bootstrap_mean_interval([]))


# Intervals that respect tasks ----------------------------------------------------------------

from hypothesis import settings as hypothesis_settings  # noqa: E402

from llm_aai.analysis.stats import (  # noqa: E402
    Bootstrap,
    cluster_bootstrap_interval,
    paired_difference,
)


@pytest.mark.parametrize(("k", "n"), [(0, 12), (3, 12), (12, 12), (81, 263), (1, 2)])
def test_wilson_agrees_with_statsmodels(k, n):
    from statsmodels.stats.proportion import proportion_confint

    assert wilson_interval(k, n) == pytest.approx(proportion_confint(k, n, method="wilson"),
                                                  abs=1e-9)


def test_cluster_bootstrap_is_reproducible_and_seeded():
    k, n = [0, 3, 1, 2, 3, 0, 0, 3], [3] * 8
    first = cluster_bootstrap_interval(k, n, Bootstrap(seed=7))
    assert cluster_bootstrap_interval(k, n, Bootstrap(seed=7)) == first
    shares = np.random.default_rng(0).random(30) * 3  # partial credit: no ties in the draws
    assert (cluster_bootstrap_interval(shares, [3] * 30, Bootstrap(seed=8))
            != cluster_bootstrap_interval(shares, [3] * 30, Bootstrap(seed=9)))
    assert all(math.isnan(v) for v in cluster_bootstrap_interval([2], [3]))  # one task


def _clustered(rng, tasks: int, trials: int):
    """Each task has its own pass probability (beta-distributed): heterogeneous tasks."""
    p = rng.beta(0.5, 0.5, size=tasks)
    return rng.binomial(trials, p), np.full(tasks, trials), 0.5


def test_wider_than_wilson_when_tasks_differ():
    rng = np.random.default_rng(1)
    k, n, _ = _clustered(rng, 40, 3)
    low, high = cluster_bootstrap_interval(k, n)
    wlow, whigh = wilson_interval(int(k.sum()), int(n.sum()))
    assert high - low > 1.3 * (whigh - wlow)


def test_coverage_on_synthetic_clustered_data():
    """Over 200 synthetic runs of 40 heterogeneous tasks x 3 trials, the 95 % task bootstrap
    covers the true mean near 95 % of the time; Wilson, pretending trials are independent,
    covers it clearly less often."""
    rng = np.random.default_rng(2)
    boot = wilson = 0
    runs = 200
    for i in range(runs):
        k, n, truth = _clustered(rng, 40, 3)
        low, high = cluster_bootstrap_interval(k, n, Bootstrap(draws=1000, seed=i))
        boot += low <= truth <= high
        wlow, whigh = wilson_interval(int(k.sum()), int(n.sum()))
        wilson += wlow <= truth <= whigh
    assert 0.88 <= boot / runs <= 0.99
    assert wilson / runs < boot / runs - 0.08


def test_paired_identical_runs_differ_by_zero_with_p_one():
    k, n = [0, 3, 1, 2, 3, 0], [3] * 6
    result = paired_difference(k, n, k, n)
    assert result.difference == 0 and result.p_value == 1.0 and result.exact
    assert (result.low, result.high) == (0.0, 0.0) and result.tasks == 6


def test_paired_strongly_different_runs_have_a_small_p():
    n = [3] * 12
    result = paired_difference([3] * 12, n, [0] * 12, n)
    assert result.difference == 1.0 and result.exact
    assert result.p_value == pytest.approx(2 / 2 ** 12)  # only all-A and all-B flips as extreme
    beyond = paired_difference([3] * 30, [3] * 30, [0] * 30, [3] * 30)
    assert not beyond.exact and beyond.p_value < 1e-3


def test_paired_sign_flip_matches_the_sign_test_on_binary_tasks():
    """One trial per task: the sign-flip test over discordant tasks is the two-sided sign
    (exact McNemar) test; compare with scipy's binomial test."""
    from scipy.stats import binomtest

    a = [1, 1, 1, 1, 1, 1, 0, 1, 0, 0]
    b = [0, 0, 0, 0, 0, 1, 1, 1, 0, 0]
    result = paired_difference(a, [1] * 10, b, [1] * 10)
    discordant = sum(x != y for x, y in zip(a, b, strict=True))
    wins = sum(x > y for x, y in zip(a, b, strict=True))
    assert result.p_value == pytest.approx(binomtest(wins, discordant).pvalue)


def test_paired_sign_test_counts_only_the_tasks_that_differ():
    """24 tasks with one trial each, 6 of them discordant: ties at zero carry no sign, so the
    test is the exact sign test over the 6 (scipy's binomial test), not sampled flips of 24."""
    from scipy.stats import binomtest

    a = [1, 1, 1, 1, 1, 0] + [1] * 9 + [0] * 9
    b = [0, 0, 0, 0, 0, 1] + [1] * 9 + [0] * 9
    result = paired_difference(a, [1] * 24, b, [1] * 24)
    assert result.exact and result.p_value == pytest.approx(binomtest(5, 6).pvalue, rel=1e-12)
    assert result.tasks == 24 and result.differing == 6


def test_paired_sign_flip_with_ties_matches_scipys_exact_permutation_test():
    """17 tasks of 3 trials, 7 of them with a nonzero difference: scipy's exact paired
    permutation test of the mean difference (all 2^17 sign flips, where a tie's flip changes
    nothing) gives the p-value that the enumeration of the 7 differing tasks gives."""
    from scipy.stats import permutation_test

    a = [3, 2, 3, 1, 2, 3, 0] + [0, 1, 2, 3, 3, 0, 1, 2, 2, 1]
    b = [1, 0, 2, 2, 0, 1, 1] + [0, 1, 2, 3, 3, 0, 1, 2, 2, 1]
    result = paired_difference(a, [3] * 17, b, [3] * 17)
    scipy_p = permutation_test(
        (np.array(a) / 3, np.array(b) / 3), lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples", n_resamples=np.inf, vectorized=True).pvalue
    assert result.exact and result.p_value == pytest.approx(scipy_p, rel=1e-9)
    assert result.differing == 7


@hypothesis_settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=12))
def test_paired_is_antisymmetric(pairs):
    """Swapping A and B negates the difference and its interval and keeps the p-value."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    n = [3] * len(pairs)
    ab, ba = paired_difference(a, n, b, n), paired_difference(b, n, a, n)
    assert ab.difference == pytest.approx(-ba.difference)
    assert ab.p_value == pytest.approx(ba.p_value)
    assert 0 < ab.p_value <= 1
    assert ab.low <= ab.difference + 1e-12 and ab.difference - 1e-12 <= ab.high


def test_paired_refuses_no_shared_task():
    with pytest.raises(ValueError, match="no task has episodes in both"):
        paired_difference([1, 0], [1, 0], [0, 1], [0, 1])
