"""The per-level metric: one value per task (its epochs already reduced), intervals over tasks."""

from __future__ import annotations

import pytest
from inspect_ai.scorer import SampleScore, Score

from llm_aai.analysis.stats import bootstrap_mean_interval
from llm_aai.inspect_eval.task import level_pass_rates


def _task(level: int, passed: float, reward: float) -> SampleScore:
    return SampleScore(score=Score(value={"passed": passed, "reward": reward}),
                       sample_metadata={"level": level})


def test_pass_rates_per_level_with_task_intervals():
    # level 1: two tasks passed in 2/3 and 1/3 of their trials; level 2: one task never
    scores = [_task(1, 2 / 3, 1.0), _task(1, 1 / 3, 0.5), _task(2, 0.0, -1.0)]
    metrics = level_pass_rates()(scores)
    assert metrics["level_1_pass_rate"] == pytest.approx(0.5)
    assert metrics["level_2_pass_rate"] == 0.0 and metrics["level_2_reward"] == -1.0
    assert metrics["all_pass_rate"] == pytest.approx(1 / 3)
    assert (metrics["level_1_pass_low"], metrics["level_1_pass_high"]) == \
        bootstrap_mean_interval([2 / 3, 1 / 3])
    assert metrics["level_1_pass_low"] >= 1 / 3 and metrics["level_1_pass_high"] <= 2 / 3
