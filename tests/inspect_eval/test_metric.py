"""The per-level metric: one value per task (its epochs already reduced), intervals over tasks."""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai.model import ModelName
from inspect_ai.scorer import SampleScore, Score, Target
from inspect_ai.solver import TaskState

from llm_aai.analysis.stats import bootstrap_mean_interval
from llm_aai.inspect_eval.task import episode_scorer, level_pass_rates


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


def test_no_scores_give_no_metrics():
    assert level_pass_rates()([]) == {}


def test_a_sample_stopped_before_its_episode_ended_is_an_error_saying_so():
    """Inspect scores a sample its time, token or message limit stopped; the solver never
    recorded a result for it."""
    state = TaskState(ModelName("mockllm/model"), "01-04-03", 2, "task", [],
                      metadata={"task_id": "01-04-03", "level": 1})
    with pytest.raises(RuntimeError, match="01-04-03 trial 2: the episode did not finish"):
        asyncio.run(episode_scorer()(state, Target("")))
