"""The manifest records a run's mode; ``analyze`` keeps modes apart and compares them by mode."""

from __future__ import annotations

from dataclasses import replace

import pytest

from llm_aai.analysis import load_runs
from llm_aai.cli.analyze import main as analyze
from llm_aai.logs import read_manifest
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.modes import ModeSettings, mode_label
from llm_aai.runner import RunConfig, run_config_of, start_run
from llm_aai.settings import read_settings

ACTION = {"modes": ModeSettings(control="action"),
         "protocol": EpisodeProtocol(max_scripts=None, max_replies=3)}


@pytest.fixture
def runs(tmp_path, mode_arena):
    arenas = tmp_path / "testbed"
    arenas.mkdir()
    (arenas / "01-04-03.yaml").write_text(mode_arena(t=60, goal=(30, 30)).read_text())

    def run(run_id, **changes):
        config = replace(RunConfig(model="heuristic", tasks="01-04-03", arenas_dir=arenas,
                                   resolution=64, protocol=EpisodeProtocol(max_scripts=2)),
                         **changes)
        return start_run(config, out=tmp_path / "runs", run_id=run_id,
                         show_progress=False).run_dir

    return {"paper-a": run("paper-a"), "paper-b": run("paper-b", seed=1),
            "action": run("action", **ACTION)}


def test_the_manifest_records_the_mode_and_resume_restores_it(runs):
    manifest, settings = read_manifest(runs["action"]), read_settings(runs["action"])
    assert settings.config.modes == ModeSettings(control="action")
    assert settings.config.protocol.max_replies == 3
    assert manifest.agent["options"] == {"control": "action"}
    assert manifest.prompt["name"] == "react-frame"
    assert run_config_of(runs["action"]).modes == ACTION["modes"]
    assert "control" not in read_manifest(runs["paper-a"]).agent["options"]


def test_runs_of_different_modes_are_never_pooled(runs):
    loaded = load_runs(runs.values(), with_turns=False)
    labels = dict(zip(loaded.runs["run_id"], loaded.runs["label"], strict=True))
    assert labels == {"paper-a": "heuristic", "paper-b": "heuristic",
                      "action": "heuristic (action control)"}
    assert loaded.episodes.groupby("label").size().to_dict() == {
        "heuristic": 2, "heuristic (action control)": 1}


def test_analyze_notes_the_modes_and_compares_them_by_mode(runs, capsys, tmp_path):
    assert analyze([str(path) for path in runs.values()]) == 0
    out = capsys.readouterr().out
    assert "heuristic (action control)" in out
    assert "note: heuristic was run in 2 modes (paper, action control)" in out
    csv = tmp_path / "by-mode.csv"
    assert analyze([*map(str, runs.values()), "--by", "mode", "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "heuristic [react] by mode (paper, action control):" in out
    header = next(line for line in out.splitlines() if line.startswith("level"))
    assert header.split()[2:4] == ["paper", "action"]
    table = csv.read_text().splitlines()
    assert table[0].startswith("mode,level") and len(table) == 3


def test_a_run_across_tasks_is_its_own_mode(runs, tmp_path, capsys):
    arenas = read_manifest(runs["paper-a"]).arenas_dir
    across = start_run(RunConfig(model="heuristic", tasks="01-04-03", arenas_dir=arenas,
                                 resolution=64, protocol=EpisodeProtocol(max_scripts=2),
                                 modes=ModeSettings(context="across-tasks", order="shuffled")),
                       out=tmp_path / "runs", run_id="across", show_progress=False).run_dir
    paths = [runs["paper-a"], across]
    loaded = load_runs(paths, with_turns=False)
    assert sorted(loaded.runs["label"]) == ["heuristic", "heuristic (context across-tasks "
                                                         "shuffled)"]
    assert loaded.episodes.groupby("label").size().to_dict() == {
        "heuristic": 1, "heuristic (context across-tasks shuffled)": 1}
    assert analyze([*map(str, paths), "--by", "mode"]) == 0
    out = capsys.readouterr().out
    assert "heuristic [react] by mode (paper, context across-tasks shuffled):" in out


def test_mode_labels_name_what_differs_from_the_paper():
    assert mode_label(ModeSettings(), 30) == "paper"
    assert mode_label(ModeSettings(observe_every=6, filmstrip=True),
                      None) == "observe every 6 filmstrip + no script cap"
    assert mode_label(ModeSettings(control="action"), None) == "action control"
    assert mode_label(ModeSettings(context="across-tasks"), 30) == "context across-tasks"
