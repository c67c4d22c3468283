"""The second partial credit: how much nearer the nearest goal (walking) an episode ended."""

from __future__ import annotations

import csv
import json
import math
import shutil

import pandas as pd
import pytest

from llm_aai.arena import ARENAS_ENV
from llm_aai.cli.analyze import main as analyze
from llm_aai.cli.grounding import main as grounding
from llm_aai.env import AnimalAIEnv
from llm_aai.grounding.nearness import NEARNESS_CSV, goal_distance, nearer, read_nearness
from llm_aai.logs import read_manifest
from llm_aai.runner import RunConfig, start_run
from tests.helpers.arenas import goal_ahead
from tests.helpers.runs import make_run

OPEN = goal_ahead(goal=(20, 30))
"""The agent facing a green ball 20 m ahead, nothing between."""
WALLED = OPEN + """    - !Item
      name: Wall
      positions:
      - !Vector3 {x: 20, y: 0, z: 20}
      rotations: [0]
      sizes:
      - !Vector3 {x: 30, y: 5, z: 1}
"""


def test_nearer_is_the_share_of_the_way_closed():
    assert nearer(20.0, 5.0, passed=False) == 0.75
    assert nearer(20.0, 25.0, passed=False) == 0.0  # ended farther: none closed
    assert nearer(20.0, math.inf, passed=False) == 0.0  # ended where no goal can be reached
    assert nearer(20.0, 20.0, passed=True) == 1.0
    # nothing to walk to at the start: no measure, passed or not (else passes would count
    # on such tasks and failures would not)
    assert math.isnan(nearer(math.inf, 3.0, passed=False))
    assert math.isnan(nearer(math.inf, 0.5, passed=True))


def _distance(tmp_path, text: str) -> float:
    arena = tmp_path / "arena.yaml"
    arena.write_text(text)
    env = AnimalAIEnv(resolution=64)
    try:
        env.reset(seed=0, options={"arena": str(arena)})
        return goal_distance(env.backend)
    finally:
        env.close()


def test_walking_distance_goes_round_a_wall(tmp_path):
    """In the open the walk is the straight line (20 m, less the ball's reach on the grid);
    a 30 m wall across the way makes it a detour round the wall's end, over 2 x 15 m."""
    straight = _distance(tmp_path, OPEN)
    assert straight == pytest.approx(20.0, abs=1.0)
    detour = _distance(tmp_path, WALLED)
    assert detour > 2 * math.hypot(15.0, 10.0) - 1.0


def test_nearness_of_real_runs_and_their_comparison(testbed_dir, tmp_path, capsys):
    for model in ("heuristic", "random"):
        start_run(RunConfig(model=model, tasks="01-04-03,01-06-02", arenas_dir=testbed_dir,
                            resolution=64), out=tmp_path, run_id=model, show_progress=False)
        assert grounding([str(tmp_path / model), "--nearness"]) == 0
    out = capsys.readouterr().out
    assert "2 episodes measured" in out and NEARNESS_CSV in out
    with (tmp_path / "heuristic" / NEARNESS_CSV).open(newline="") as handle:
        rows = {row["episode"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"01-04-03_t1", "01-06-02_t1"}
    for row in rows.values():
        start, end = float(row["start_m"]), float(row["end_m"])
        assert start > 1.0
        expected = nearer(start, end, row["passed"] == "true")
        assert float(row["nearer"]) == pytest.approx(expected, abs=1e-4)
    assert read_nearness(tmp_path / "heuristic")["01-04-03_t1"] == float(
        rows["01-04-03_t1"]["nearer"])
    table = tmp_path / "compare.csv"
    assert analyze([str(tmp_path / "heuristic"), str(tmp_path / "random"), "--compare",
                    "--csv", str(table)]) == 0
    assert "nearer = mean share of the walking distance" in capsys.readouterr().out
    compared = pd.read_csv(table)
    row = compared[(compared["measure"] == "nearer") & (compared["level"] == 0)].iloc[0]
    heuristic = pd.Series([float(r["nearer"]) for r in rows.values()]).mean()
    assert row["tasks"] == 2 and row["a"] == pytest.approx(heuristic, abs=1e-4)


def test_a_missing_or_broken_nearness_file_is_a_clear_error(tmp_path):
    from llm_aai.grounding.nearness import NearnessError

    with pytest.raises(NearnessError, match=r"nearness\.csv: not found .*--nearness"):
        read_nearness(tmp_path)
    (tmp_path / NEARNESS_CSV).write_text("episode,nearer\n01-04-03_t1,0.5\n01-06-02_t1,far\n")
    with pytest.raises(NearnessError, match=r"nearness\.csv:3: nearer 'far' is not a number"):
        read_nearness(tmp_path)


@pytest.fixture(scope="module")
def env_run(testbed_dir, tmp_path_factory):
    """A heuristic run that found the testbed through $LLM_AAI_ARENAS (no --arenas-dir)."""
    out = tmp_path_factory.mktemp("env-run")
    return make_run(testbed_dir, out, "env", "--model", "heuristic", "--tasks",
                    "01-04-03,01-06-02", "--max-scripts", "3", arenas_from_env=True)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No $LLM_AAI_ARENAS and an empty testbed cache (conftest: its downloads are refused)."""
    monkeypatch.delenv(ARENAS_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))


def test_a_run_records_where_it_found_its_arenas(env_run, testbed_dir):
    manifest = read_manifest(env_run)
    assert manifest.arenas_dir is None  # no --arenas-dir: the settings say nothing
    assert manifest.arenas_found_in == (str(testbed_dir.resolve()), "env:LLM_AAI_ARENAS")


def test_grounding_finds_the_arenas_the_run_found_without_the_variable(env_run, offline,
                                                                       tmp_path, capsys):
    run = tmp_path / "env"
    shutil.copytree(env_run, run)
    assert grounding([str(run), "--nearness"]) == 0
    with (run / NEARNESS_CSV).open(newline="") as handle:
        assert [r["episode"] for r in csv.DictReader(handle)] == ["01-04-03_t1", "01-06-02_t1"]
    assert grounding([str(run)]) == 0  # the claims too
    with (run / "grounding.csv").open(newline="") as handle:
        assert {r["episode"] for r in csv.DictReader(handle)} == {"01-04-03_t1", "01-06-02_t1"}
    assert "download" not in capsys.readouterr().err


@pytest.mark.parametrize("claims", [False, True])
def test_arenas_found_nowhere_fail_once_and_write_nothing(env_run, offline, tmp_path, capsys,
                                                          claims):
    run = tmp_path / "env"
    shutil.copytree(env_run, run)
    manifest = json.loads((run / "manifest.json").read_text())
    gone = tmp_path / "moved-away"
    manifest["arenas_location"]["folder"] = str(gone)
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert grounding([str(run)] if claims else [str(run), "--nearness"]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and err.count("downloading the pinned testbed") == 1
    assert f"is not in {gone} (where the run found its arenas, env:LLM_AAI_ARENAS)" in errors[0]
    assert "not in the testbed cache" in errors[0] and "Connection refused" in errors[0]
    assert "--arenas-dir DIR" in errors[0]
    written = {"grounding.csv", "grounding_episodes.csv", NEARNESS_CSV}
    assert not written & {p.name for p in run.iterdir()}


def test_a_folder_given_by_flag_and_gone_is_named_once(env_run, offline, tmp_path, capsys):
    run = tmp_path / "env"
    shutil.copytree(env_run, run)
    manifest = json.loads((run / "manifest.json").read_text())
    gone = str(tmp_path / "moved-away")
    manifest["run"]["config"]["arenas_dir"] = gone
    manifest["arenas_location"] = {"folder": gone, "source": "--arenas-dir"}
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert grounding([str(run), "--nearness"]) == 2
    err = capsys.readouterr().err
    assert err.count(gone) == 1 and f"is not in {gone} (the run's --arenas-dir), and" in err
