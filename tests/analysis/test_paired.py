import json
import shutil

import pandas as pd
import pytest

from llm_aai.analysis import load_runs
from llm_aai.analysis.metrics import model_summary
from llm_aai.analysis.paired import compare_runs, progress
from llm_aai.cli.analyze import main
from llm_aai.logs.schema import CONTEXT_OVERFLOW


def _all(table, measure="passed"):
    return table[(table["measure"] == measure) & (table["level"] == 0)].iloc[0]


def test_progress_is_the_share_of_the_pass_mark():
    episodes = pd.DataFrame({"reward": [1.0, -0.5, 4.0, 0.3], "pass_mark": [2.0, 2.0, 2.0, 0.0],
                             "passed": [False, False, True, False]})
    assert list(progress(episodes)) == [0.5, 0.0, 1.0, 0.0]


def test_identical_runs_compare_to_zero_with_p_one(two_models):
    alpha = load_runs([two_models[0]], with_turns=False).episodes
    table = compare_runs(alpha, alpha)
    row = _all(table)
    assert row["difference"] == 0 and row["p_value"] == 1.0 and row["tasks"] == 40
    assert row["differing"] == 0 and row["exact"]


def test_alpha_against_beta(two_models, tmp_path, capsys):
    out_csv = tmp_path / "compare.csv"
    assert main([*map(str, two_models), "--compare", "--csv", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "A - B" in out and "sign-flip" in out and "cluster bootstrap 95% over tasks" in out
    table = pd.read_csv(out_csv)
    row = _all(table)
    # alpha passes levels 1-2 (8 tasks) and a third of level 3; beta one task of level 1
    assert row["a"] == pytest.approx(28 / 117) and row["b"] == pytest.approx(3 / 120)
    # 14 of the 40 tasks differ (11 in passes, 3 only in the trials alpha lost to
    # infrastructure); the 26 ties carry no sign, so the test enumerates the 2^14 flips of
    # the others exactly: only the observed one and its mirror are as extreme
    assert row["tasks"] == 40 and row["differing"] == 14
    assert row["low"] > 0 and row["exact"] and row["p_value"] == pytest.approx(2 / 2 ** 14)
    level1 = table[(table["measure"] == "passed") & (table["level"] == 1)].iloc[0]
    # 3 of its 4 tasks differ, all one way: the exact sign test of 3 discordant pairs, 2/8
    assert level1["exact"] and level1["p_value"] == pytest.approx(0.25)
    # the same seed gives the same table
    assert main([*map(str, two_models), "--compare", "--csv", str(tmp_path / "again.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "again.csv"), table)


def test_runs_sharing_no_task_are_a_clear_error(make_run, tmp_path, capsys):
    low = make_run(tmp_path, model="low", levels=range(1, 3))
    high = make_run(tmp_path, model="high", levels=range(5, 7))
    assert main([str(low), str(high), "--compare"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(low) in err and str(high) in err
    assert "share no task" in err


def test_compare_takes_two_runs(two_models, capsys):
    assert main([str(two_models[0]), "--compare"]) == 2
    assert "exactly two run directories" in capsys.readouterr().err


def test_a_context_overflow_is_left_out_of_the_comparison_as_of_the_level_table(
        two_models, tmp_path):
    alpha = shutil.copytree(two_models[0], tmp_path / "alpha")
    result = alpha / "episodes" / "01-04-03_t1" / "result.json"
    record = json.loads(result.read_text())
    assert record["passed"]
    result.write_text(json.dumps({**record, "end_reason": CONTEXT_OVERFLOW}))
    a, b = (load_runs([run]).episodes for run in (alpha, two_models[1]))
    level_table = model_summary(a).iloc[0]
    assert (level_table["k"], level_table["n"]) == (27, 116)  # 117 played, 1 overflowed
    compared = _all(compare_runs(a, b))
    assert compared["a"] == pytest.approx(27 / 116)


def test_the_same_run_directory_twice_is_refused(two_models, capsys):
    alpha = two_models[0]
    assert main([str(alpha), str(alpha) + "/", "--compare"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "the same run directory" in err and str(alpha) in err


def test_tasks_one_run_lacks_are_counted_left_out_and_said_so(make_run, tmp_path, capsys):
    """A played levels 1-3, B levels 1-2 and one task of level 3 lost to infrastructure: the
    comparison pairs the 8 shared tasks and names the 4 only A has a result on."""
    a = make_run(tmp_path, model="a", levels=range(1, 4), trials=range(1, 3))
    b = make_run(tmp_path, model="b", levels=range(1, 4), trials=range(1, 3),
                 infra=lambda task, level, trial: task == "03-11-01")
    for task in ("03-09-01", "03-18-01", "03-21-01"):
        shutil.rmtree(b / "episodes" / f"{task}_t1")
        shutil.rmtree(b / "episodes" / f"{task}_t2")
    assert main([str(a), str(b), "--compare"]) == 0
    out = capsys.readouterr().out
    assert _line(out, "all levels", "passed").split()[4] == "8"  # tasks (differ): the shared
    assert ("note: tasks with a result in one run alone are left out of the paired comparison: "
            "4 task(s) only in A (03-09-01, 03-11-01, 03-18-01, 03-21-01); none only in B") in out
    assert "2 episode(s) lost to infrastructure" in out
    assert "  B 03-11-01_t1 after 2 attempt(s)" in out


def test_compare_prints_what_the_runs_differ_in_and_arenas_that_differ(make_run, tmp_path,
                                                                      capsys):
    a = make_run(tmp_path, model="m", levels=range(1, 2), run_id="a")
    b = make_run(tmp_path, model="m", levels=range(1, 2), run_id="b")
    for run, digest, resolution in ((a, "a" * 64, 512), (b, "b" * 64, 128)):
        manifest = run / "manifest.json"
        data = json.loads(manifest.read_text())
        data["arenas"] = {"01-04-03": digest}
        data["run"]["config"]["resolution"] = resolution
        manifest.write_text(json.dumps(data))
    assert main([str(a), str(b), "--compare"]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: A and B played 01-04-03 from arena files that differ (their manifests' "
        "sha256): those pairs compare different arenas",
        "note: A and B differ in settings (A: resolution=512; B: resolution=128); A - B "
        "measures these differences together"]


def _line(out, name, measure):
    return next(line for line in out.splitlines()
                if line.startswith(measure) and f" {name} " in line)
