import re

import pytest

from llm_aai.analysis import LEVEL_NAMES, reference_levels, reference_populations, reference_tasks
from llm_aai.analysis.reference import partly_played, played_reference, shared_tasks

POPULATIONS = ("children", "children_all", "olympics_top10")


@pytest.fixture(scope="module")
def ref():
    return reference_populations()


def test_shape_and_keys(ref):
    assert set(ref["population"]) == set(POPULATIONS)
    assert set(ref["scope"]) == {"overall", "level", "task"}
    for population in POPULATIONS:
        mine = ref[ref["population"] == population]
        assert (mine["scope"] == "overall").sum() == 1
        assert sorted(mine.loc[mine["scope"] == "level", "level"]) == list(range(1, 11))
        tasks = mine[mine["scope"] == "task"]
        assert tasks["task_id"].nunique() == len(tasks) == 40
        assert tasks.groupby("level").size().tolist() == [4] * 10
        pairs = zip(tasks["task_id"], tasks["level"], strict=True)
        assert all(task.startswith(f"{level:02d}-") for task, level in pairs)


def test_same_forty_tasks_and_pass_marks_everywhere(ref):
    tasks = reference_tasks(ref)
    per_population = [tasks[tasks["population"] == p].set_index("task_id")["pass_mark"]
                      for p in POPULATIONS]
    for other in per_population[1:]:
        assert other.sort_index().equals(per_population[0].sort_index())


def test_pass_marks_match_the_testbed_yamls(ref, testbed_dir):
    tasks = reference_tasks(ref)
    for task_id, mark in zip(tasks["task_id"], tasks["pass_mark"], strict=True):
        text = (testbed_dir / f"{task_id}.yaml").read_text()
        found = re.findall(r"pass_mark:\s*(-?[\d.]+)", text)
        assert found == [f"{mark:g}"] or [float(v) for v in found] == [mark], task_id


def test_levels_are_named(ref):
    levels = reference_levels(ref)
    assert all(levels["level"].map(LEVEL_NAMES) == levels["level_name"])
    assert LEVEL_NAMES[1] == "Food Retrieval" and LEVEL_NAMES[10] == "Causal Reasoning"


def test_proportions_are_k_over_n(ref):
    assert ((ref["k"] >= 0) & (ref["k"] <= ref["n"])).all()
    assert (ref["proportion"] - ref["k"] / ref["n"]).abs().max() < 5e-7


def test_pooled_counts_add_up(ref):
    levels, tasks = reference_levels(ref), reference_tasks(ref)
    for population in POPULATIONS:
        lv = levels[levels["population"] == population].set_index("level")
        tk = tasks[tasks["population"] == population].groupby("level")[["k", "n"]].sum()
        assert lv["k"].equals(tk["k"]) and lv["n"].equals(tk["n"]), population
        overall = ref[(ref["population"] == population) & (ref["scope"] == "overall")].iloc[0]
        assert (overall["k"], overall["n"]) == (lv["k"].sum(), lv["n"].sum())


def test_headline_numbers(ref):
    overall = ref[ref["scope"] == "overall"].set_index("population")
    assert (overall.loc["children", "k"], overall.loc["children", "n"]) == (1320, 2360)
    assert overall.loc["children", "proportion"] == pytest.approx(0.5593, abs=5e-5)
    assert (overall.loc["olympics_top10", "k"], overall.loc["olympics_top10", "n"]) == (139, 400)
    levels = reference_levels(ref)
    children = levels[levels["population"] == "children"]
    assert (children["n"] == 236).all() and (children["individuals"] == 59).all()
    top10 = levels[levels["population"] == "olympics_top10"]
    assert (top10["n"] == 40).all() and (top10["individuals"] == 10).all()
    assert top10.set_index("level").loc[10, "k"] == 0


def test_quartiles_are_ordered_proportions(ref):
    levels = reference_levels(ref)
    assert ((0 <= levels["q1"]) & (levels["q1"] <= levels["median"])
            & (levels["median"] <= levels["q3"]) & (levels["q3"] <= 1)).all()
    assert ref.loc[ref["scope"] != "level", ["q1", "median", "q3"]].isna().all().all()


def test_the_reference_over_whole_levels_is_unchanged(ref):
    played = played_reference(reference_tasks(ref)["task_id"], ref)
    levels = reference_levels(played)
    assert levels.drop(columns=["tasks", "level_tasks"]).equals(reference_levels(ref))
    assert set(levels["tasks"]) == {4}


def test_a_level_played_in_part_is_compared_over_the_tasks_played(ref):
    played = reference_levels(played_reference(["01-04-03", "01-06-02", "03-09-01"], ref))
    children = played[played["population"] == "children"].set_index("level")
    assert (children.loc[1, "k"], children.loc[1, "n"], children.loc[1, "tasks"]) == \
        (53 + 52, 59 + 59, 2)
    assert children.loc[1, "proportion"] == pytest.approx(105 / 118)
    assert children.loc[1, ["q1", "median", "q3"]].isna().all()  # no per-child rates shipped
    assert children.loc[2, "k"] == 172 and children.loc[2, "tasks"] == 4  # none played: whole
    olympics = played[played["population"] == "olympics_top10"].set_index("level")
    assert (olympics.loc[1, "k"], olympics.loc[1, "n"]) == (20, 20)
    assert partly_played(["01-04-03", "01-06-02", "03-09-01"], ref) == {
        1: (["01-04-03", "01-06-02"], 4), 3: (["03-09-01"], 4)}


def test_shared_tasks_are_those_every_label_played_of_a_level_or_all_where_none():
    tasks, differing = shared_tasks({"a": {"01-04-03", "01-06-02", "02-10-01", "99-01-01"},
                                     "b": {"01-04-03", "02-17-01"}, "c": {"01-04-03"}})
    # level 1: 01-04-03 shared; level 2: a and b share none, so both; outside tasks kept
    assert tasks == ["01-04-03", "02-10-01", "02-17-01", "99-01-01"]
    assert differing == {1: (["01-04-03"], {"a": ["01-04-03", "01-06-02"]}),
                         2: (["02-10-01", "02-17-01"], {"a": ["02-10-01"], "b": ["02-17-01"]})}
    assert shared_tasks({"a": {"01-04-03"}, "b": {"01-04-03"}}) == (["01-04-03"], {})
