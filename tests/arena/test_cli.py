import subprocess
import sys
from pathlib import Path

import pytest

from llm_aai.arena.catalog import all_tasks
from llm_aai.cli.arenas import main

TASKS = [t.task_id for t in all_tasks()[::30]]  # what the loopback server serves

MALFORMED = Path(__file__).parent / "malformed"


def test_validate_testbed_folder_exits_zero(testbed_dir, capsys):
    assert main(["validate", str(testbed_dir), "--no-warnings"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "checked 900 file(s): 0 invalid, 0 error(s)" in err


def test_validate_reports_each_problem_and_exits_one(testbed_dir, capsys):
    bad = MALFORMED / "unknown_object.yaml"
    assert main(["validate", str(bad), str(testbed_dir / "01-01-01.yaml")]) == 1
    out, _ = capsys.readouterr()
    assert out.splitlines() == [f"{bad}:8: name: unknown object 'Wal' (did you mean Wall?); "
                                "AAI would skip it"]


def test_validate_missing_path_is_a_message(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 1
    assert "nope.yaml: no such file or folder" in capsys.readouterr().out


def test_warnings_do_not_fail_validation(testbed_dir, capsys):
    assert main(["validate", str(testbed_dir / "05-30-01.yaml")]) == 0
    assert "warning: positions: y=1500" in capsys.readouterr().out


def test_list_subset_full_and_selection(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 41 and lines[1].split() == ["01-04-03", "1", "Food", "Retrieval"]
    assert main(["list", "--full", "--level", "10"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 91
    assert main(["list", "--tasks", "01-01-01"]) == 2  # a usage error, as run says it
    assert "add --full" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["list", "--level", "12"], "error: level '12' is out of range: levels are 1 to 10"),
    (["list", "--level", "x"], "error: bad level 'x'"),
    (["show", "04-12-3"], "error: bad task id '04-12-3': ids look like 04-12-03"),
    (["show", "11-01-01"], "error: task 11-01-01 is not in the testbed"),
])
def test_a_bad_level_or_task_id_is_a_usage_error(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_fetch_command_against_loopback_server(server, tmp_path, capsys):
    ids = ",".join(TASKS[:4])
    args = ["fetch", "--dest", str(tmp_path), "--source", server.url, "--tasks", ids, "--quiet"]
    assert main(args) == 0
    assert "4 downloaded, 0 already present" in capsys.readouterr().out
    assert main(args) == 0
    assert "0 downloaded, 4 already present" in capsys.readouterr().out


def test_show_places_a_task_from_arenas_dir(testbed_dir, capsys):
    assert main(["show", "03-13-01", "--arenas-dir", str(testbed_dir), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "CylinderTunnel" in out and "GoodGoal" in out and "dropped" not in out


def _shown_positions(out: str) -> list[tuple[str, float, float, float]]:
    """(name, x, y, z) of every object row ``show`` prints, agent first."""
    rows = out.splitlines()[2:]  # after the arena line and the column header
    return [(name, float(x), float(y), float(z))
            for name, x, y, z, *_ in (row.split() for row in rows if not row.startswith("dropped"))]


def test_show_prints_the_layout_the_episode_with_that_seed_plays(testbed_dir, capsys, monkeypatch):
    # 01-24-02 places ten BadGoals at random along two lines: the layout depends on the seed.
    from llm_aai.env import AnimalAIEnv
    from llm_aai.sim.simulator import Simulator

    loaded = []
    original = Simulator.load

    def record(sim, placed, rng):
        loaded.append(placed)
        return original(sim, placed, rng)

    monkeypatch.setattr(Simulator, "load", record)
    seed = 5
    env = AnimalAIEnv("01-24-02", resolution=64, arenas_dir=testbed_dir)
    try:
        _, info = env.reset(seed=seed)
    finally:
        env.close()
    (placed,) = loaded
    played = [(obj.spec.name, *obj.position) for obj in (placed.agent, *placed.objects)]

    assert main(["show", "01-24-02", "--arenas-dir", str(testbed_dir), "--seed", str(seed)]) == 0
    out = capsys.readouterr().out
    shown = _shown_positions(out)
    assert [row[0] for row in shown] == [row[0] for row in played]
    for (name, *xyz), (_, *expected) in zip(shown, played, strict=True):
        assert xyz == pytest.approx(expected, abs=0.006), name  # printed to 2 decimals
    assert f"(episode seed {seed}, world seed {info['world_seed']})" in out.splitlines()[0]


def test_show_refuses_a_negative_seed(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["show", "01-24-02", "--seed", "-1"])
    assert exit_.value.code == 2
    assert "--seed: must be a non-negative integer" in capsys.readouterr().err


def test_show_missing_task_explains_how_to_get_it(tmp_path, capsys):
    assert main(["show", "04-12-03", "--arenas-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: arena 04-12-03 not found") and "fetch" in err


def test_module_entry_point_never_prints_a_traceback(tmp_path):
    junk = tmp_path / "junk.yaml"
    junk.write_bytes(b"\x00\xff\xfe binary")
    result = subprocess.run([sys.executable, "-m", "llm_aai.arenas", "validate", str(junk)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    assert f"{junk}:1: yaml: not a text file" in result.stdout
    bad = subprocess.run([sys.executable, "-m", "llm_aai.arenas", "show", "1-2-3"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "bad task id '1-2-3'" in bad.stderr
