"""``python -m llm_aai.variants make`` end to end on real testbed files, and its bad input."""

from __future__ import annotations

import csv
import json
import re
import shutil
import socket
from pathlib import Path

import pandas as pd
import pytest

from llm_aai.arena import check_file, errors_only
from llm_aai.cli.analyze import main as analyze
from llm_aai.cli.replay import main as replay
from llm_aai.cli.run import main as run
from llm_aai.cli.variants import main as make
from llm_aai.cli.view import main as view
from llm_aai.settings import read_settings
from llm_aai.variants import MAX_COUNT, read_variants
from llm_aai.variants.index import COLUMNS, INDEX_FILE
from llm_aai.variants.validation import HeuristicParity

ENCLOSED = """!ArenaConfig
arenas:
  0: !Arena
    t: 100
    pass_mark: 0
    items:
    - !Item
      name: Agent
      positions:
      - !Vector3 {x: 5, y: 0, z: 5}
      rotations: [0]
    - !Item
      name: Wall
      positions:
      - !Vector3 {x: 30, y: 0, z: 25}
      - !Vector3 {x: 30, y: 0, z: 35}
      - !Vector3 {x: 25, y: 0, z: 30}
      - !Vector3 {x: 35, y: 0, z: 30}
      rotations: [0, 0, 0, 0]
      sizes:
      - !Vector3 {x: 11, y: 5, z: 1}
      - !Vector3 {x: 11, y: 5, z: 1}
      - !Vector3 {x: 1, y: 5, z: 9}
      - !Vector3 {x: 1, y: 5, z: 9}
      colors:
      - !RGB {r: 153, g: 153, b: 153}
      - !RGB {r: 153, g: 153, b: 153}
      - !RGB {r: 153, g: 153, b: 153}
      - !RGB {r: 153, g: 153, b: 153}
    - !Item
      name: GoodGoal
      positions:
      - !Vector3 {x: 30, y: 0, z: 30}
      sizes:
      - !Vector3 {x: 1, y: 1, z: 1}
"""


@pytest.fixture(scope="module")
def made(testbed_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("variants") / "made"
    assert make(["make", "01-04-03", "--count", "2", "--seed", "3", "--out", str(out),
                 "--arenas-dir", str(testbed_dir)]) == 0
    return out


def rows_of(out: Path) -> list[dict]:
    with (out / INDEX_FILE).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_make_writes_valid_distinct_variants_and_their_index(made, testbed_dir):
    rows = rows_of(made)
    kept = [row for row in rows if row["outcome"] == "kept"]
    assert [row["variant_id"] for row in kept] == ["01-04-03-v1", "01-04-03-v2"]
    assert list(rows[0]) == list(COLUMNS)
    assert {(row["node_id"], row["host"]) for row in rows} == {("local", socket.gethostname())}
    for row in kept:
        path = made / row["file"]
        assert errors_only(check_file(path)) == []  # what `arenas validate` checks
        assert row["parent"] == "01-04-03" and row["transformations"]
        assert row["physics_build"] == "3.x"  # the first build solves the parent
        assert float(row["oracle_rewards"]) >= float(row["pass_mark"])
        parent = row["heuristic_parent"]
        parity = HeuristicParity(parent.count("P"), len(parent), tolerance=1)
        assert len(row["heuristic_variant"]) == len(parent) == 3
        assert parity.agrees(tuple(c == "P" for c in row["heuristic_variant"] if c != "-"))
        assert path.read_text() != (testbed_dir / "01-04-03.yaml").read_text()
    assert len({row["placed_sha256"] for row in kept}) == 2
    assert not list(made.glob(".candidate-*"))  # rejected drafts are deleted, rows kept
    assert [v.variant_id for v in read_variants(made)] == ["01-04-03-v1", "01-04-03-v2"]


def test_the_same_seed_makes_the_same_variants(made, testbed_dir, tmp_path):
    again = tmp_path / "again"
    assert make(["make", "01-04-03", "--count", "2", "--seed", "3", "--out", str(again),
                 "--arenas-dir", str(testbed_dir)]) == 0
    for name in ("01-04-03-v1.yaml", "01-04-03-v2.yaml"):
        assert (again / name).read_text() == (made / name).read_text()


@pytest.mark.parametrize("argv, message", [
    (["99-99-99", "--count", "3"], "task 99-99-99 is not in the testbed"),
    (["01-04-03", "--count", "0"], f"give 1 to {MAX_COUNT}"),
    (["01-04-03", "--count", str(MAX_COUNT + 1)], f"give 1 to {MAX_COUNT}"),
    (["01-21-01", "--count", "3"], "layout cannot be transformed: every object is placed at "
                                   "random"),
    (["01-04-03", "--count", "3", "--physics-builds", "3.x,4.x"],
     "--physics-builds: physics_builds ['3.x', '4.x']: give one or more distinct builds"),
])
def test_bad_input_is_one_clear_line_and_exit_2(argv, message, testbed_dir, tmp_path, capsys):
    out = tmp_path / "out"
    assert make(["make", *argv, "--out", str(out), "--arenas-dir", str(testbed_dir)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (out / INDEX_FILE).exists()


def test_a_folder_with_variants_is_not_overwritten(made, testbed_dir, capsys):
    before = (made / INDEX_FILE).read_text()
    assert make(["make", "01-04-03", "--count", "1", "--out", str(made),
                 "--arenas-dir", str(testbed_dir)]) == 2
    assert "holds variants made for another request: --count 2 (now 1)" in \
        capsys.readouterr().err
    assert (made / INDEX_FILE).read_text() == before


def test_a_parent_the_oracle_cannot_solve_yields_no_variants(testbed_dir, tmp_path, capsys):
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    (arenas / "01-01-01.yaml").write_text(ENCLOSED, encoding="utf-8")  # food walled in
    shutil.copy(testbed_dir / "01-04-03.yaml", arenas / "01-04-03.yaml")
    out = tmp_path / "out"
    assert make(["make", "01-01-01", "01-04-03", "--count", "1", "--out", str(out),
                 "--arenas-dir", str(arenas), "--oracle-budget", "300"]) == 0
    printed = capsys.readouterr().out
    assert "01-01-01: 0/1 kept; parent unsolved by the oracle" in printed
    assert "1 of 2 tasks have all 1" in printed
    rows = {row["parent"]: row for row in rows_of(out)}
    assert rows["01-01-01"]["outcome"] == "rejected"
    assert rows["01-01-01"]["reason"] == "parent unsolved by the oracle"


def test_run_plays_variants_and_analyze_compares_them(made, testbed_dir, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert run(["--model", "heuristic", "--variants", str(made), "--out", str(runs),
                "--run-id", "variants", "--no-progress"]) == 0
    assert run(["--model", "heuristic", "--tasks", "01-04-03", "--arenas-dir",
                str(testbed_dir), "--out", str(runs), "--run-id", "originals",
                "--no-progress"]) == 0
    summary = pd.read_csv(runs / "variants" / "summary.csv")
    assert sorted(summary["task_id"]) == ["01-04-03-v1", "01-04-03-v2"]
    assert set(summary["parent_task"]) == {"01-04-03"}
    manifest = json.loads((runs / "variants" / "manifest.json").read_text())
    assert read_settings(runs / "variants").variants == {"01-04-03-v1": "01-04-03",
                                                         "01-04-03-v2": "01-04-03"}
    assert set(manifest["arenas"]) == {"01-04-03-v1", "01-04-03-v2"}
    capsys.readouterr()
    assert analyze([str(runs / "originals"), str(runs / "variants"), "--by", "variants"]) == 0
    table = capsys.readouterr().out
    assert "heuristic" in table and "Food Retrieval" in table
    food = next(line for line in table.splitlines() if "Food Retrieval" in line)
    assert re.search(r" \d/1 .* \d/2 ", food)  # 1 original episode, 2 on its variants
    # a variant's episode re-simulates and shows like any other (its file found in DIR)
    assert replay([str(runs / "variants" / "episodes" / "01-04-03-v1_t1"),
                   "--resimulate"]) == 0
    assert "verdict: MATCH" in capsys.readouterr().out
    # and so does one stopped before its end (no result: its id names the variant)
    stopped = shutil.copytree(runs / "variants", tmp_path / "stopped")
    (stopped / "episodes" / "01-04-03-v1_t1" / "result.json").unlink()
    assert replay([str(stopped / "episodes" / "01-04-03-v1_t1"), "--resimulate"]) == 0
    assert "verdict: MATCH" in capsys.readouterr().out
    assert view([str(runs / "variants"), "--out", str(tmp_path / "site")]) == 0
    assert (tmp_path / "site" / "index.html").is_file()


def test_run_refuses_a_folder_without_an_index(tmp_path, capsys):
    assert run(["--model", "heuristic", "--variants", str(tmp_path), "--out",
                str(tmp_path / "runs"), "--no-progress"]) == 2
    assert "no variants.csv" in capsys.readouterr().err


@pytest.mark.parametrize("flags", [
    ["--model", "oracle"],  # a privileged agent reads the variant's placed world
    ["--model", "heuristic", "--observation", "text"],
    ["--model", "heuristic", "--control", "action", "--max-replies", "20"],
])
def test_variants_play_in_every_mode(made, tmp_path, flags):
    runs = tmp_path / "runs"
    assert run([*flags, "--variants", str(made), "--tasks", "01-04-03", "--out", str(runs),
                "--run-id", "mode", "--no-progress"]) == 0
    summary = pd.read_csv(runs / "mode" / "summary.csv")
    assert sorted(summary["task_id"]) == ["01-04-03-v1", "01-04-03-v2"]
    assert set(summary["parent_task"]) == {"01-04-03"}
    if flags[1] == "oracle":
        assert summary["passed"].all()  # 01-04-03 places nothing at random: as validated


def test_a_run_notes_variants_validated_in_another_build(made, tmp_path, capsys):
    """A build-dependent parent's variants are checked in the 2019 build; a 3.x run says so."""
    folder = tmp_path / "mixed"
    shutil.copytree(made, folder)
    rows = rows_of(folder)
    for row in rows:
        if row["variant_id"] == "01-04-03-v2":
            row["physics_build"] = "2019"
    with (folder / INDEX_FILE).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    capsys.readouterr()
    assert run(["--model", "heuristic", "--variants", str(folder), "--dry-run"]) == 0
    assert ("note: 1 variant (of 01-04-03) was validated in the 2019 build, not the 3.x "
            "build this run plays") in capsys.readouterr().err
    assert run(["--model", "heuristic", "--variants", str(folder), "--dry-run",
                "--physics-build", "2019"]) == 0
    assert "1 variant (of 01-04-03) was validated in the 3.x build, not the 2019" in \
        capsys.readouterr().err
    assert run(["--model", "heuristic", "--variants", str(made), "--dry-run"]) == 0
    assert "note:" not in capsys.readouterr().err
