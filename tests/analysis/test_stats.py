import math

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
    from llm_aai.analysis.stats import format_interval, format_rate

    assert format_interval(0.14, 0.4) == "[0.14, 0.40]"
    assert format_interval(math.nan, math.nan) == "-"
    assert format_rate(3, 12) == "3/12 0.25 [0.09, 0.53]" and format_rate(0, 0) == "-"
    assert variants._rate(3, 12) == format_rate(3, 12)
    row = {"n": 12, "k": 3, "infra_failures": 0, "proportion": 0.25, "ci_low": 0.0893,
           "ci_high": 0.5323}
    assert report._rate(row) == "3/12 0.25 [0.09, 0.53]"
    import pandas as pd

    group = pd.DataFrame({"infra_failure": [False] * 12, "passed": [True] * 3 + [False] * 9})
    assert probes._cell(group) == "3/12 0.25 [0.09, 0.53]"


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
