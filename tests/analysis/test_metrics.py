import pytest

from llm_aai.analysis import (
    infra_failures,
    load_runs,
    model_summary,
    pass_rates,
    reference_populations,
    wilson_interval,
    with_reference,
)
from llm_aai.analysis.stats import Z_95

from .conftest import alpha_passes, children_tasks

Z2 = Z_95**2


@pytest.fixture(scope="module")
def episodes(two_models):
    return load_runs(two_models, with_turns=False).episodes


@pytest.fixture(scope="module")
def levels(episodes):
    return pass_rates(episodes, by="level")


def test_level_counts(levels):
    alpha = levels[levels["label"] == "alpha"].set_index("level")
    beta = levels[levels["label"] == "beta"].set_index("level")
    assert alpha["k"].tolist() == [12, 12, 4, 0, 0, 0, 0, 0, 0, 0]
    assert alpha["n"].tolist() == [12, 12, 12, 12, 10, 12, 12, 12, 12, 11]
    assert alpha["infra_failures"].tolist() == [0, 0, 0, 0, 2, 0, 0, 0, 0, 0]
    assert alpha["episodes"].tolist() == [12, 12, 12, 12, 12, 12, 12, 12, 12, 11]
    assert beta["k"].tolist() == [3] + [0] * 9
    assert (beta["n"] == 12).all() and (beta["tasks"] == 4).all()
    assert alpha.loc[3, "proportion"] == pytest.approx(1 / 3)
    assert alpha.loc[8, "level_name"] == "Object Permanence and Working Memory"
    assert levels["label"].tolist()[:1] == ["alpha"] and len(levels) == 20


def test_level_wilson_bounds(levels):
    alpha = levels[levels["label"] == "alpha"].set_index("level")
    assert alpha.loc[1, "ci_low"] == pytest.approx(12 / (12 + Z2))
    assert alpha.loc[1, "ci_high"] == 1.0
    assert alpha.loc[4, ["ci_low", "ci_high"]].tolist() == pytest.approx([0.0, Z2 / (12 + Z2)])
    assert alpha.loc[5, "ci_high"] == pytest.approx(0.2775, abs=5e-5)  # 0/10, infra excluded
    assert alpha.loc[3, ["ci_low", "ci_high"]].tolist() == pytest.approx(
        list(wilson_interval(4, 12)))


def test_reward_and_health_exclude_infrastructure(levels):
    marks = {task: mark for task, level, mark in children_tasks()}
    alpha = levels[levels["label"] == "alpha"].set_index("level")
    level1 = [marks[t] + 0.5 for t, lv, _ in children_tasks() if lv == 1]
    assert alpha.loc[1, "mean_reward"] == pytest.approx(sum(level1) / 4)
    assert alpha.loc[3, "mean_final_health"] == pytest.approx(80 * 4 / 12)
    level5 = [marks[t] - 1.0 for t, lv, _ in children_tasks() if lv == 5 for _ in range(3)]
    level5.remove(marks["05-09-01"] - 1.0)
    level5.remove(marks["05-24-01"] - 1.0)
    assert alpha.loc[5, "mean_reward"] == pytest.approx(sum(level5) / 10)


def test_task_table(episodes):
    tasks = pass_rates(episodes, by="task")
    alpha = tasks[tasks["label"] == "alpha"].set_index("task_id")
    assert len(alpha) == 40
    assert alpha.loc["03-09-01", ["k", "n"]].tolist() == [1, 3]
    assert alpha.loc["05-09-01", ["k", "n", "infra_failures"]].tolist() == [0, 2, 1]
    assert alpha.loc["10-22-03", ["k", "n", "episodes"]].tolist() == [0, 2, 2]
    assert alpha.loc["09-03-01", "pass_mark"] == 10.9
    for task_id, level, _ in children_tasks():
        expected = sum(alpha_passes(task_id, level, t) for t in (1, 2, 3))
        assert alpha.loc[task_id, "k"] == expected


def test_model_summary(episodes):
    summary = model_summary(episodes).set_index("label")
    alpha, beta = summary.loc["alpha"], summary.loc["beta"]
    assert (alpha["episodes"], alpha["infra_failures"], alpha["k"], alpha["n"]) == \
        (119, 2, 28, 117)
    assert (alpha["runs"], alpha["tasks"]) == (1, 40)
    assert (alpha["ci_low"], alpha["ci_high"]) == pytest.approx(wilson_interval(28, 117))
    assert alpha["mean_final_health"] == pytest.approx(80 * 28 / 117)
    assert alpha["mean_scripts_used"] == 5.0
    assert (beta["invalid_replies"], beta["scripts"]) == (24, 600)
    assert beta["invalid_reply_rate"] == pytest.approx(0.04)
    assert alpha["invalid_reply_rate"] == 0.0
    assert beta["input_tokens"] == 120 * 5 * 900
    assert beta["cost_usd"] == pytest.approx(0.6)


def test_infra_failures_are_listed(episodes):
    failures = infra_failures(episodes)
    assert failures["episode_id"].tolist() == ["05-09-01_t2", "05-24-01_t3"]
    assert (failures["attempts"] == 2).all()
    assert failures["infra_error"].str.contains("unreachable").all()


def test_with_reference(levels, episodes):
    ref = reference_populations()
    merged = with_reference(levels, ref)
    row = merged[(merged["label"] == "beta") & (merged["level"] == 1)].iloc[0]
    assert row["children_proportion"] == pytest.approx(142 / 236, abs=1e-6)
    assert (row["children_q1"], row["children_median"], row["children_q3"]) == (0.5, 0.5, 0.75)
    assert row["olympics_top10_proportion"] == pytest.approx(31 / 40)
    tasks = with_reference(pass_rates(episodes, by="task"), ref, ("children_all",))
    row = tasks[tasks["task_id"] == "01-04-03"].iloc[0]
    assert row["children_all_proportion"] == pytest.approx(83 / 101, abs=1e-6)
    with pytest.raises(ValueError, match="no reference population 'adults'"):
        with_reference(levels, ref, ("adults",))


def test_split_runs_are_pooled(tmp_path, make_run):
    first = make_run(tmp_path, model="gamma", trials=range(1, 3), levels=range(1, 4),
                     passes=alpha_passes)
    second = make_run(tmp_path, model="gamma", trials=range(3, 4), levels=range(1, 4),
                      passes=alpha_passes)
    episodes = load_runs([first, second], with_turns=False).episodes
    levels = pass_rates(episodes).set_index("level")
    assert levels.index.tolist() == [1, 2, 3]
    assert levels["k"].tolist() == [12, 12, 4] and (levels["n"] == 12).all()
    assert model_summary(episodes).iloc[0]["runs"] == 2


def test_unknown_grouping(episodes):
    with pytest.raises(ValueError, match="by must be one of"):
        pass_rates(episodes, by="trial")
