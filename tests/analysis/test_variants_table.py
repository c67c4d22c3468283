"""analyze's originals-against-variants table: the gap, its interval and the flag."""

from __future__ import annotations

import pandas as pd
import pytest

from llm_aai.analysis.variants import MEMORISATION_FLAG, gap_interval, variants_table


def test_gap_interval_matches_newcombes_worked_example():
    # Newcombe (1998), Statistics in Medicine 17:873, table II example (b): 56/70 vs 48/80
    gap, low, high = gap_interval(56, 70, 48, 80)
    assert gap == pytest.approx(0.2)
    assert (low, high) == (pytest.approx(0.0524, abs=1e-4), pytest.approx(0.3339, abs=1e-4))


def episodes(rows) -> pd.DataFrame:
    return pd.DataFrame([{"label": label, "level": level, "task_id": task,
                          "parent_task": parent, "passed": passed, "infra_failure": False}
                         for label, level, task, parent, passed in rows])


def test_a_model_that_passes_only_the_originals_is_flagged():
    tasks = ["01-04-03", "01-06-02", "01-21-01", "01-23-01"]
    rows = [("m", 1, task, None, True) for task in tasks for _ in range(3)] + \
           [("m", 1, f"{task}-v1", task, False) for task in tasks for _ in range(3)] + \
           [("m", 1, "02-02-01", None, True)] * 5  # no variant played: not compared
    table = variants_table(episodes(rows))
    level = table[table["level"] == 1].iloc[0]
    assert (level["original_k"], level["original_n"]) == (12, 12)
    assert (level["variant_k"], level["variant_n"]) == (0, 12)
    assert level["tasks"] == 4 and (level["gap_boot_low"], level["gap_boot_high"]) == (1, 1)
    assert level["p_value"] == pytest.approx(2 / 2 ** 4)  # all four tasks one way
    assert level["original"].endswith("tasks[1.00, 1.00]")
    assert level["flag"] == MEMORISATION_FLAG
    assert list(table["level"]) == [1, 0]


def test_a_gap_carried_by_one_task_is_not_flagged():
    """One task passed 12 times as the original and never as a variant, another alike on both
    sides: Newcombe's interval (24 trials a side, as if independent) lies above zero, the
    interval over the two tasks does not, and the flag follows the tasks."""
    rows = [("m", 1, "01-04-03", None, True)] * 12 + \
           [("m", 1, "01-04-03-v1", "01-04-03", False)] * 12 + \
           [("m", 1, "01-06-02", None, False)] * 12 + \
           [("m", 1, "01-06-02-v1", "01-06-02", False)] * 12
    level = variants_table(episodes(rows)).iloc[0]
    assert level["gap"] == 0.5 and level["gap_low"] > 0  # Newcombe alone would flag it
    assert level["tasks"] == 2 and level["gap_boot_low"] <= 0 < level["gap_boot_high"]
    assert level["flag"] == ""


def test_equal_rates_are_not_flagged_and_models_are_kept_apart():
    rows = [("a", 2, "02-02-01", None, k % 2 == 0) for k in range(10)] + \
           [("a", 2, "02-02-01-v1", "02-02-01", k % 2 == 0) for k in range(10)] + \
           [("b", 2, "02-02-01", None, True)] * 3
    table = variants_table(episodes(rows))
    assert set(table["label"]) == {"a"}  # b played no variant
    assert (table["flag"] == "").all()
    assert table.iloc[0]["gap"] == 0


def test_runs_without_variants_are_refused():
    with pytest.raises(ValueError, match="--variants"):
        variants_table(episodes([("m", 1, "01-04-03", None, True)]))
