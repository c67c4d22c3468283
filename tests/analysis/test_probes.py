"""``analyze --by observation``: one model's pass rate per level under each probe."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from llm_aai.analysis.load import Runs, probe_of
from llm_aai.analysis.probes import probe_levels, probe_runs, probe_table
from llm_aai.analysis.reference import reference_levels, reference_populations
from llm_aai.analysis.stats import (
    Bootstrap,
    cluster_bootstrap_interval,
    format_interval,
    wilson_interval,
)
from llm_aai.cli.analyze import main as analyze_main
from llm_aai.runner import RunConfig, start_run


def test_probe_names_come_from_the_prompt_and_the_observation():
    assert probe_of(RunConfig(model="m")) == "image"  # runs from before the probes
    assert probe_of(RunConfig(model="m", observation="text")) == "text"
    assert probe_of(RunConfig(model="m", observation="both", perspective="allocentric")) == \
        "both (allocentric)"
    assert probe_of(RunConfig(model="m", prompt="plan", observation="text")) == "plan"


def test_the_table_has_a_column_per_probe_and_leaves_out_infrastructure_failures():
    episodes = pd.DataFrame({
        "model": ["m"] * 5, "level": [1, 1, 1, 1, 2],
        "probe": ["image", "image", "text", "plan", "text"],
        "passed": [True, False, True, False, False],
        "infra_failure": [False, False, False, False, True],
        "task_id": ["01-04-03", "01-06-02", "01-04-03", "01-04-03", "02-02-01"],
    }).assign(row=lambda e: e["model"])
    table = probe_table(episodes)
    assert list(table.columns) == ["model", "level", "level_name", "image", "text", "plan"]
    first = table.iloc[0]
    assert first["image"].startswith("1/2 0.50") and first["text"].startswith("1/1 1.00")
    assert first["plan"].startswith("0/1 0.00")
    assert table.iloc[1]["text"] == "-" and table.iloc[1]["image"] == "-"


def test_each_probe_cell_gives_the_interval_over_tasks_beside_wilson():
    """Four tasks x three trials, two passed every time and two never: the cluster bootstrap
    over tasks (a variant under its task) is the one the level tables give, and it is wider
    than Wilson's over the 12 trials as if independent."""
    tasks = ["01-04-03", "01-06-02", "01-21-01", "01-23-01"]
    rows = [{"model": "m", "row": "m", "level": 1, "probe": "text", "task_id": task,
             "parent_task": None, "passed": i < 2, "infra_failure": False}
            for i, task in enumerate(tasks) for _ in range(3)]
    rows[-1] |= {"task_id": "01-23-01-v1", "parent_task": "01-23-01"}
    episodes = pd.DataFrame(rows)
    cell = probe_table(episodes, bootstrap=Bootstrap(seed=5)).iloc[0]["text"]
    totals, counts = [3, 3, 0, 0], [3, 3, 3, 3]
    low, high = cluster_bootstrap_interval(totals, counts, Bootstrap(seed=5))
    assert cell == f"6/12 0.50 {format_interval(*wilson_interval(6, 12))} tasks[{low:.2f}, " \
                   f"{high:.2f}]"
    assert high - low > wilson_interval(6, 12)[1] - wilson_interval(6, 12)[0]


def test_the_table_gives_children_and_olympics_beside_the_probes():
    episodes = pd.DataFrame({"model": ["m", "m"], "level": [1, 10], "probe": ["image", "text"],
                             "passed": [True, False], "infra_failure": [False, False],
                             "task_id": ["01-04-03", "10-07-01"]}).assign(row="m")
    reference = reference_populations()
    table = probe_table(episodes, reference, ("children", "olympics_top10"))
    assert list(table.columns)[-2:] == ["children", "olympics_top10"]
    levels = reference_levels(reference)
    for population in ("children", "olympics_top10"):
        ref = levels[(levels["population"] == population) & (levels["level"] == 10)].iloc[0]
        assert table.iloc[1][population] == (f"{ref['proportion']:.2f} "
                                             f"(IQR {ref['q1']:.2f}-{ref['q3']:.2f})")
    with pytest.raises(ValueError, match="no reference population 'adults'"):
        probe_table(episodes, reference, ("adults",))


def test_the_figures_bars_are_one_per_model_and_probe_in_probe_order():
    episodes = pd.DataFrame({
        "model": ["b", "a", "a", "a", "a"], "level": [1, 1, 1, 2, 1],
        "probe": ["plan", "plan", "image", "text", "image"],
        "passed": [True, False, True, True, False], "infra_failure": [False] * 5,
        "task_id": ["t"] * 5, "reward": [1.0] * 5, "final_health": [50.0] * 5,
    }).assign(row=lambda e: e["model"], label=lambda e: e["model"] + ": " + e["probe"])
    levels = probe_levels(episodes)
    assert list(pd.unique(levels["label"])) == ["b: plan", "a: image", "a: text", "a: plan"]
    image = levels[levels["label"] == "a: image"].iloc[0]
    assert (image["k"], image["n"]) == (1, 2) and image["ci_low"] < 0.5 < image["ci_high"]


def test_analyze_by_observation_on_real_runs(testbed_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # the oracle's plans
    for name, changes in (("img", {}), ("txt", {"observation": "text"}),
                          ("allo", {"observation": "text", "perspective": "allocentric"}),
                          ("plan", {"prompt": "plan"})):
        start_run(RunConfig(model="heuristic", tasks="01-04-03", arenas_dir=testbed_dir,
                            resolution=64, **changes),
                  out=tmp_path, run_id=name, show_progress=False)
    csv, figure = tmp_path / "probes.csv", tmp_path / "probes.png"
    status = analyze_main([str(tmp_path / n) for n in ("img", "txt", "allo", "plan")]
                          + ["--by", "observation", "--csv", str(csv), "--plot", str(figure),
                             "--oracle-budget", "2000"])
    assert status == 0
    out = capsys.readouterr().out
    assert "image" in out and "text" in out and "plan" in out
    plan_table = out.split("Plan metrics")[1].splitlines()
    header, row = plan_table[1].split(), plan_table[3].split()
    assert header[:5] == ["model", "level", "episodes", "executable", "passed"]
    assert "wall_hit" in header and "lcs" in header
    assert row[:4] == ["heuristic", "1", "1", "1.0"]  # the heuristic's one-script plan parsed
    metrics = dict(zip(header, row, strict=True))
    assert 0 < float(metrics["lcs"]) <= 1 and 0 <= float(metrics["command_f1"]) <= 1
    table = pd.read_csv(csv)
    assert list(table.columns) == ["model", "level", "level_name", "image", "text",
                                   "text (allocentric)", "plan", "children", "olympics_top10"]
    assert table.iloc[0]["text"].startswith("1/1")  # the heuristic reads its way to the ball
    # GSU's two frames of reference side by side: the heuristic reads both
    assert table.iloc[0]["text (allocentric)"].startswith("1/1")
    assert figure.stat().st_size > 10_000 and f"figure written to {figure}" in out


def _edit(run, change):
    manifest = run / "manifest.json"
    data = json.loads(manifest.read_text())
    change(data["run"]["config"])
    manifest.write_text(json.dumps(data))


def test_by_observation_keeps_modes_apart_and_prints_the_level_tables_notes(make_run, tmp_path,
                                                                         capsys):
    """An action-control run is not pooled into the paper run's image cell; two text runs
    at different resolutions pooled in one cell are flagged; a context overflow and the
    infrastructure failures are listed, as under the level table."""
    paper = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="paper",
                     passes=lambda task, level, trial: level == 1, levels=range(1, 3),
                     infra=lambda task, level, trial: (task, trial) == ("02-02-01", 1))
    action = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="action",
                      levels=range(1, 3))
    _edit(action, lambda config: (config["modes"].update(control="action"),
                                  config["protocol"].update(max_scripts=None, max_replies=50)))
    text = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="text",
                    levels=range(1, 3))
    _edit(text, lambda config: config.update(observation="text"))
    small = make_run(tmp_path, model="alpha", trials=range(3, 5), run_id="small",
                     levels=range(1, 3))
    _edit(small, lambda config: config.update(observation="text", resolution=128))
    result = text / "episodes" / "01-04-03_t1" / "result.json"
    result.write_text(result.read_text().replace('"end_reason": "health"',
                                                 '"end_reason": "context_overflow"'))
    csv = tmp_path / "probes.csv"
    assert analyze_main([str(run) for run in (paper, action, text, small)]
                        + ["--by", "observation", "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    table = pd.read_csv(csv)
    rows = table[table["level"] == 1].set_index("model")
    assert list(rows.index) == ["alpha", "alpha (action control)"]
    assert rows.loc["alpha", "image"].startswith("8/8 1.00")  # the paper run's alone
    assert rows.loc["alpha (action control)", "image"].startswith("0/8 0.00")
    assert rows.loc["alpha", "text"].startswith("0/15 0.00")  # the overflow left out
    assert "note: alpha: text pools runs with different settings" in out
    assert "resolution=128" in out
    assert "1 episode(s) ended by a context overflow (not counted)" in out
    assert "  alpha: text 01-04-03_t1 after 5 reply(ies)" in out
    assert "1 episode(s) lost to infrastructure" in out
    assert "note: alpha was run in 2 modes (paper, action control)" in out


def test_a_plan_run_joins_its_model_s_row_unless_the_model_has_several_prompts():
    runs = pd.DataFrame({
        "model": ["a", "a", "b", "b", "b"], "prompt": ["react", "plan", "react", "icl", "plan"],
        "mode": ["paper"] * 5, "probe": ["image", "plan", "text", "text", "plan"]})
    placed = probe_runs(Runs(episodes=runs, turns=pd.DataFrame(), runs=runs)).runs
    assert list(placed["row"]) == ["a", "a", "b [react]", "b [icl]", "b [plan]"]
    assert list(placed["label"]) == ["a: image", "a: plan", "b [react]: text", "b [icl]: text",
                                     "b [plan]: plan"]
