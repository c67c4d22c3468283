import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from llm_aai.analysis import load_runs
from llm_aai.analysis.metrics import priced_cost
from llm_aai.cli.analyze import main


def test_prints_level_table_and_writes_outputs(two_models, tmp_path, capsys):
    plot, table = tmp_path / "out" / "fig.png", tmp_path / "out" / "levels.csv"
    code = main([*map(str, two_models), "--plot", str(plot), "--csv", str(table)])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    header = lines[0]
    for column in ("level", "alpha", "beta", "Children 6-10 (n=59)", "AAI Olympics 2019 top 10"):
        assert column in header
    level5 = next(line for line in lines if line.startswith("5 "))
    assert "0/10+2i" in level5 and "0/12 0.00 [0.00, 0.24]" in level5
    assert "0.61 (IQR [0.25, 1.00])" in level5  # children, level 5
    # one interval format in every table: [low, high], never low-high
    assert not re.search(r"\d\.\d\d-\d\.\d\d", out) and "[0.00, 0.24]" in out
    overall = next(line for line in lines if line.startswith("all "))
    assert "28/117+2i 0.24" in overall and "0.56" in overall and "0.35" in overall
    assert "2 episode(s) lost to infrastructure" in out
    assert "1 unfinished episode(s) ignored" in out
    assert 20_000 < plot.stat().st_size < 2_000_000
    csv = pd.read_csv(table)
    assert len(csv) == 20 and {"k", "n", "ci_low", "children_q1"} <= set(csv.columns)


def test_by_task_with_all_children(two_models, tmp_path, capsys):
    table = tmp_path / "tasks.csv"
    assert main([str(two_models[1]), "--by", "task", "--children", "all",
                 "--csv", str(table)]) == 0
    out = capsys.readouterr().out
    assert "Children 6-10, all" in out
    assert next(line for line in out.splitlines() if line.startswith("01-04-03")).split()[3] \
        == "3/3"
    csv = pd.read_csv(table, dtype={"task_id": str})
    assert len(csv) == 40 and "children_all_proportion" in csv.columns


def test_plot_without_a_file_writes_into_the_run_s_folder(make_run, two_models, tmp_path,
                                                          capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = make_run(tmp_path / "runs", model="solo", levels=range(1, 3))
    assert main([str(run), "--plot"]) == 0
    assert f"figure written to {run / 'pass-rates.png'}" in capsys.readouterr().out
    assert (run / "pass-rates.png").stat().st_size > 20_000
    assert sorted(path.name for path in tmp_path.iterdir()) == ["runs"]
    # a file named is written where the user said, relative to the working folder
    assert main([str(run), "--plot", "mine.png"]) == 0
    assert (tmp_path / "mine.png").stat().st_size > 20_000
    # several runs have no one folder: the file must be named
    assert main([*map(str, two_models), "--plot"]) == 2
    assert ("--plot without a file writes pass-rates.png into the run's folder: with 2 runs, "
            "name the file (--plot FILE)") in capsys.readouterr().err


def test_not_a_run_directory_is_a_clean_error(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: {tmp_path} is not an llm-aai run directory (no manifest.json)"


def test_bad_plot_format_fails_before_loading(tmp_path, capsys):
    assert main([str(tmp_path / "nothing"), "--plot", "fig.gif"]) == 2
    assert "figure format must be one of .png, .svg, .pdf" in capsys.readouterr().err


def test_run_without_finished_episodes(tmp_path, capsys):
    (tmp_path / "manifest.json").write_text(
        '{"manifest_version": 3, "run_id": "r", '
        '"run": {"config": {"model": "m", "prompt": "react"}, "tasks": []}}')
    assert main([str(tmp_path)]) == 2
    assert "no finished episodes" in capsys.readouterr().err


def test_module_entry_point_has_no_traceback(tmp_path):
    done = subprocess.run([sys.executable, "-m", "llm_aai.analyze", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and "no such directory" in done.stderr


def test_help_prints_a_single_percent_sign(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # undo argparse's line wrapping
    assert "Wilson 95% intervals" in text and "%%" not in text


def test_run_given_twice_is_counted_once(two_models, capsys):
    beta = str(two_models[1])
    assert main([beta]) == 0
    once = capsys.readouterr().out
    assert main([beta, beta + "/"]) == 0
    assert capsys.readouterr().out == once
    level1 = next(line for line in once.splitlines() if line.startswith("1 "))
    assert "3/12 0.25" in level1  # only 01-04-03 passed, in its 3 trials


def test_runs_pooled_across_settings_are_flagged(make_run, tmp_path, capsys):
    long = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="long")
    short = make_run(tmp_path, model="alpha", trials=range(3, 5), run_id="short")
    manifest = short / "manifest.json"
    data = json.loads(manifest.read_text())
    data["run"]["config"]["protocol"] = {"max_scripts": 10}
    manifest.write_text(json.dumps(data))
    assert main([str(long), str(short)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == ["note: alpha pools runs with different settings (long: "
                     "protocol.max_scripts=30; short: protocol.max_scripts=10); analyse "
                     "them separately to compare like with like"]


@pytest.mark.parametrize(("edit", "shown"), [
    (lambda data: data["run"]["config"].update(observation="text"),
     ("observation=image", "observation=text")),
    (lambda data: data["run"]["config"].update(physics_build="2019"),
     ("physics_build=3.x", "physics_build=2019")),
    (lambda data: data.setdefault("prompt", {}).update(turn_messages_sha256="0" * 64),
     ("turn messages sha256=None", "turn messages sha256=" + "0" * 64)),
    (lambda data: data["agent"].update(options={"keep_last_turns": 4}),
     ("keep_last_turns=None", "keep_last_turns=4")),
])
def test_probes_builds_edited_messages_and_trimmed_context_are_settings(
        make_run, tmp_path, capsys, edit, shown):
    first = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="first")
    other = make_run(tmp_path, model="alpha", trials=range(3, 5), run_id="other")
    manifest = other / "manifest.json"
    data = json.loads(manifest.read_text())
    edit(data)
    manifest.write_text(json.dumps(data))
    assert main([str(first), str(other)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "pools runs with different settings" in notes[0]
    assert all(part in notes[0] for part in shown)


def test_runs_whose_arena_files_differ_for_a_shared_task_are_flagged(make_run, tmp_path,
                                                                     capsys):
    first = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="first")
    other = make_run(tmp_path, model="alpha", trials=range(3, 5), run_id="other")
    for run, digest in ((first, "a" * 64), (other, "b" * 64)):
        manifest = run / "manifest.json"
        data = json.loads(manifest.read_text())
        data["arenas"] = {"01-04-03": digest, "06-09-01": "c" * 64}
        manifest.write_text(json.dumps(data))
    assert main([str(first), str(other)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == ["note: alpha pools runs whose arena files differ for 01-04-03 (their "
                     "manifests' sha256); analyse them separately to compare like with like"]


def test_runs_repeating_the_same_seeds_are_flagged(make_run, tmp_path, capsys):
    first = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="first")
    again = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="again")
    assert main([str(first), str(again)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == ["note: alpha: 80 episode(s) in again repeat the task and seed of an "
                     "episode in another pooled run (runs started with the same --seed); they "
                     "are not independent trials"]


def test_tasks_outside_the_children_subset_are_flagged(make_run, tmp_path, capsys):
    run = make_run(tmp_path, model="alpha", trials=range(1, 2), levels=range(1, 2))
    result = run / "episodes" / "01-04-03_t1" / "result.json"
    data = json.loads(result.read_text())
    data["task_id"] = "01-01-01"  # a full-testbed task the children did not play
    result.write_text(json.dumps(data))
    assert main([str(run)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    # the level's other 3 tasks of the 40 are the ones its populations' rates are over
    assert notes == ["note: the runs played part of a level's tasks in the children's 40 "
                     "(level 1: 3 of 4 (01-06-02, 01-21-01, 01-23-01)): there the children's "
                     "and Olympics agents' rates are over the tasks played alone, from their "
                     "per-task results, with no interquartile range (marked 'N of 4 tasks')",
                     "note: 1 task(s) played are outside the 40-task children subset (e.g. "
                     "01-01-01); the children's and Olympics agents' rates in the table are over "
                     "the 40 tasks, so compare per level with care"]


def test_sampling_options_count_as_settings_and_repeats_within_a_run_do_not(make_run, tmp_path,
                                                                            capsys):
    cold = make_run(tmp_path, model="alpha", trials=range(1, 3), run_id="cold")
    warm = make_run(tmp_path, model="alpha", trials=range(3, 5), run_id="warm")
    manifest = warm / "manifest.json"
    data = json.loads(manifest.read_text())
    data["agent"]["options"] = {"temperature": 0.7, "timeout_s": 30}
    manifest.write_text(json.dumps(data))
    result = cold / "episodes" / "01-04-03_t2" / "result.json"  # a replay: trials share a seed
    result.write_text(result.read_text().replace('"seed": 2', '"seed": 1'))
    assert main([str(cold), str(warm)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == ["note: alpha pools runs with different settings (cold: temperature=None; "
                     "warm: temperature=0.7); analyse them separately to compare like with like"]


def test_a_cost_partly_unknown_shows_the_known_part_and_how_many_episodes_lack_a_price(
        tmp_path, make_run, capsys):
    # a priced run in which two episodes' calls had no known price (cost_usd null): the ten
    # others cost $0.005 each, which the cell keeps, marked as a lower bound
    run = make_run(tmp_path, model="alpha", levels=range(1, 2))
    for result_file in sorted(run.glob("episodes/*/result.json"))[:2]:
        record = json.loads(result_file.read_text())
        result_file.write_text(json.dumps({**record, "cost_usd": None}))
    assert main([str(run)]) == 0
    summary = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith("alpha ")][-1]
    assert summary.endswith(">= 0.05 (2 of 12 episodes unpriced)")


def _lost_and_timed_out(make_run, tmp_path):
    """Level 1 (12 episodes of $0.005); 01-04-03_t1 lost to infrastructure after a first
    attempt set aside ($0.001 in its turn log, $0.001 sealed); 01-06-02_t1 charged $0.03 for a
    call that timed out."""
    run = make_run(tmp_path, model="alpha", levels=range(1, 2),
                   infra=lambda task, level, trial: (task, trial) == ("01-04-03", 1))
    result_file = run / "episodes" / "01-06-02_t1" / "result.json"
    record = json.loads(result_file.read_text())
    result_file.write_text(json.dumps({**record, "unanswered_cost_usd": 0.03}))
    return run


def test_the_cost_counts_attempts_set_aside_and_shows_unanswered_calls_apart(
        tmp_path, make_run, capsys):
    # what --budget-usd counted: the set-aside attempt's measured cost is in, the timeout's
    # estimate beside it, never added in
    run = _lost_and_timed_out(make_run, tmp_path)
    runs = load_runs([run], with_turns=False)
    cost = priced_cost(runs.episodes, runs.attempts)
    assert cost["cost_usd"] == pytest.approx(11 * 0.005 + 0.001 + 0.001)
    assert (cost["attempts"], cost["unanswered_episodes"]) == (1, 1)
    assert cost["unanswered_cost_usd"] == pytest.approx(0.03)
    assert main([str(run)]) == 0
    summary = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith("alpha ")][-1]
    assert summary.endswith("0.06 (with 1 attempt set aside or unfinished) + ~0.03 estimated "
                            "for unanswered calls (in 1 episode)")


def test_a_model_without_a_price_has_its_cost_unknown(tmp_path, make_run, capsys):
    run = make_run(tmp_path, model="alpha", levels=range(1, 2))
    manifest = run / "manifest.json"  # costs recorded as 0 for a model litellm cannot price
    data = json.loads(manifest.read_text())
    data["run"]["cost_known"] = False
    manifest.write_text(json.dumps(data))
    assert main([str(run)]) == 0
    summary = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith("alpha ")][-1]
    assert summary.endswith("unknown (no price)")


def test_level_table_shows_both_intervals_and_says_which(two_models, capsys):
    assert main([*map(str, two_models), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    level3 = next(line for line in out.splitlines() if line.startswith("3 "))
    # alpha passes trial 1 of each level-3 task: every task alike, so the bootstrap over
    # tasks is a point while Wilson (trials as if independent) is not
    assert "4/12 0.33 [0.14, 0.61] tasks[0.33, 0.33]" in level3
    assert "Wilson 95% CI over pooled trials" in out
    assert "cluster bootstrap 95% over tasks (2000 resamples of the tasks, seed 3)" in out


_FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
from llm_aai.analysis import load_runs
from llm_aai.analysis.metrics import priced_cost
from llm_aai.cli.analyze import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("option", ["--csv", "--plot"])
def test_a_write_cut_short_leaves_the_file_as_it_was(two_models, tmp_path, option):
    """The disk fills (a file-size limit) while the table or figure is written: the file
    already there stays whole, never a truncated one that looks valid."""
    target = tmp_path / ("table.csv" if option == "--csv" else "fig.png")
    target.write_text("the previous file\n")
    done = subprocess.run([sys.executable, "-c", _FULL_DISK, *map(str, two_models),
                           option, str(target)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "cannot write output" in done.stderr
    assert target.read_bytes() == b"the previous file\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == [target.name]  # no temporary


def test_a_run_across_tasks_is_noted_as_not_independent_episodes(make_run, tmp_path, capsys):
    """One conversation per trial: a task's outcome can change the next one's, which the
    intervals (Wilson over trials, the bootstrap over tasks) take as independent."""
    run = make_run(tmp_path, model="alpha", levels=range(1, 2), run_id="across")
    manifest = run / "manifest.json"
    data = json.loads(manifest.read_text())
    data["run"]["config"]["modes"]["context"] = "across-tasks"
    manifest.write_text(json.dumps(data))
    other = make_run(tmp_path, model="beta", levels=range(1, 2), run_id="per-task")
    expected = ("note: across played each trial's tasks in one conversation (--context "
                "across-tasks): its episodes are not independent (a task's outcome is told "
                "before the next), and the intervals, which take them as independent, may be "
                "too narrow")
    for extra in ([], ["--compare"], ["--by", "observation"]):
        assert main([str(run), str(other), *extra]) == 0
        notes = [line for line in capsys.readouterr().out.splitlines()
                 if line.startswith("note:")]
        assert expected in notes and not any("per-task played" in note for note in notes)


def _played_as_variants(run):
    """Make ``run``'s episodes variants of the tasks they played (``TASK-v1``, parent TASK)."""
    for result_file in run.glob("episodes/*/result.json"):
        record = json.loads(result_file.read_text())
        result_file.write_text(json.dumps({**record, "task_id": f"{record['task_id']}-v1",
                                           "parent_task": record["task_id"]}))


def test_the_variants_table_prints_the_level_tables_notes(make_run, tmp_path, capsys):
    """Settings pooled, episodes lost to infrastructure: the variants table rests on them as
    the level table does; the children-subset note is left out (no populations shown, and
    every variant is outside the 40)."""
    originals = make_run(tmp_path, model="alpha", levels=range(1, 2), run_id="originals",
                         infra=lambda task_id, level, trial: (task_id, trial) == ("01-04-03", 2))
    variants = make_run(tmp_path, model="alpha", levels=range(1, 2), run_id="variants")
    _played_as_variants(variants)
    manifest = variants / "manifest.json"
    data = json.loads(manifest.read_text())
    data["run"]["config"]["protocol"] = {"max_scripts": 10}
    manifest.write_text(json.dumps(data))
    assert main([str(originals), str(variants), "--by", "level"]) == 0
    level_notes = capsys.readouterr().out.split("note:", 1)[1]
    assert main([str(originals), str(variants), "--by", "variants"]) == 0
    out = capsys.readouterr().out
    assert ("note: alpha pools runs with different settings (originals: "
            "protocol.max_scripts=30; variants: protocol.max_scripts=10)") in out
    assert ("1 episode(s) lost to infrastructure (not counted as failures):\n"
            "  alpha 01-04-03_t2 after 2 attempt(s)") in out
    assert "children subset" in level_notes and "children subset" not in out


def _partly_played(make_run, tmp_path):
    """01-04-03 and 02-10-01 alone of levels 1 and 2, the 4 tasks of level 3; 1 of 3 trials
    passed everywhere (as ``run --tasks 01-04-03,02-10-01,...``)."""
    run = make_run(tmp_path, model="heuristic", levels=range(1, 4),
                   passes=lambda task, level, trial: trial == 1)
    for folder in (run / "episodes").iterdir():
        if folder.name[:2] in ("01", "02") and not folder.name.startswith(("01-04-03",
                                                                           "02-10-01")):
            shutil.rmtree(folder)
    return run


def test_a_level_played_in_part_is_compared_with_the_reference_over_its_tasks_played(
        tmp_path, make_run, capsys):
    csv = tmp_path / "levels.csv"
    assert main([str(_partly_played(make_run, tmp_path)), "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines()
            if re.match(r"(1|2|3|all) ", line)}
    # children passed 01-04-03 53/59 and 02-10-01 45/59, not their levels' 0.60 and 0.73
    assert "0.90 (1 of 4 tasks)" in rows["1"] and "1.00 (1 of 4 tasks)" in rows["1"]
    assert "0.76 (1 of 4 tasks)" in rows["2"] and "0.80 (1 of 4 tasks)" in rows["2"]
    assert "0.77 (IQR [0.75, 1.00])" in rows["3"]  # played whole: as before
    assert "0.79" in rows["all"]  # (53 + 45 + 181) / (59 + 59 + 236)
    assert ("note: the runs played part of a level's tasks in the children's 40 (level 1: 1 "
            "of 4 (01-04-03); level 2: 1 of 4 (02-10-01))") in out
    table = pd.read_csv(csv).set_index("level")
    assert table.loc[1, "children_proportion"] == pytest.approx(53 / 59)
    assert pd.isna(table.loc[1, "children_q1"])


def test_the_plot_draws_a_level_played_in_part_without_an_interquartile_range(
        tmp_path, make_run, capsys):
    plot = tmp_path / "fig.svg"
    # wide enough for the legend's entries to stay on one line each
    assert main([str(_partly_played(make_run, tmp_path)), "--plot", str(plot),
                 "--size", "30x6"]) == 0
    assert "levels 1, 2: rate over the tasks played only (played in part), no IQR" in \
        plot.read_text()


def test_attempts_that_made_no_model_call_are_not_counted(tmp_path, make_run, capsys):
    """A run stopped before its first reply leaves folders that spent nothing."""
    run = make_run(tmp_path, model="alpha", levels=range(1, 2))
    (run / "episodes" / "01-04-03_t9").mkdir()  # unfinished, no turn written
    (run / "episodes" / "01-04-03_t8.attempt-1").mkdir()
    (run / "episodes" / "01-04-03_t8.attempt-1" / "turns.jsonl").write_text("")
    assert load_runs([run], with_turns=False).attempts.empty
    assert main([str(run)]) == 0
    summary = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith("alpha ")][-1]
    assert summary.endswith(" 0.06")


def _damaged_attempt(make_run, tmp_path, model="alpha", run_id=None):
    """Level 1 with 01-04-03_t1's first attempt set aside, its turn log damaged (line 1)."""
    run = make_run(tmp_path, model=model, levels=range(1, 2), run_id=run_id,
                   infra=lambda task, level, trial: (task, trial) == ("01-04-03", 1))
    turns = run / "episodes" / "01-04-03_t1.attempt-1" / "turns.jsonl"
    turns.write_text("{not json\n" + turns.read_text())
    return run


def test_an_attempt_whose_log_is_damaged_is_unpriced_and_noted_not_an_error(
        tmp_path, make_run, capsys):
    run = _damaged_attempt(make_run, tmp_path)
    attempts = load_runs([run], with_turns=False).attempts
    assert len(attempts) == 1 and not attempts["cost_known"].iloc[0]
    assert "turns.jsonl:1" in attempts["unreadable"].iloc[0]
    assert main([str(run)]) == 0
    out = capsys.readouterr().out
    summary = [line for line in out.splitlines() if line.startswith("alpha ")][-1]
    assert summary.endswith(">= 0.06 (1 of 1 attempts unpriced; with 1 attempt set aside or "
                            "unfinished)")
    assert "01-04-03_t1.attempt-1: the set aside attempt's logs cannot be read" in out
    other = make_run(tmp_path, model="beta", levels=range(1, 2))
    assert main([str(run), str(other), "--compare"]) == 0
    assert "the set aside attempt's logs cannot be read" in capsys.readouterr().out


def _alpha_whole_beta_in_part(make_run, tmp_path):
    """alpha played the 4 tasks of level 1, beta 01-04-03 alone."""
    whole = make_run(tmp_path, model="alpha", levels=range(1, 2))
    part = make_run(tmp_path, model="beta", levels=range(1, 2))
    for folder in (part / "episodes").iterdir():
        if not folder.name.startswith("01-04-03"):
            shutil.rmtree(folder)
    return whole, part


def test_labels_that_played_different_tasks_of_a_level_are_compared_over_those_shared(
        tmp_path, make_run, capsys):
    """One population column for both: over the tasks both played, the other named."""
    whole, part = _alpha_whole_beta_in_part(make_run, tmp_path)
    assert main([str(whole), str(part)]) == 0
    out = capsys.readouterr().out
    level = next(line for line in out.splitlines() if line.startswith("1 "))
    assert "0.90 (1 of 4 tasks)" in level  # the children on 01-04-03, not the level's 0.60
    assert ("note: level 1: the labels played different tasks of it; the children's and "
            "Olympics agents' rates are over 01-04-03 (the tasks they share), so the rates of "
            "alpha there are over other tasks than the populations' (alpha: 01-04-03, "
            "01-06-02, 01-21-01, 01-23-01)") in out


def test_a_table_showing_tasks_dash_says_what_it_means(make_run, two_models, tmp_path,
                                                      capsys):
    """A level played on one task has no interval over tasks: its ``tasks-`` is explained."""
    legend = "tasks- = no interval over tasks: the rate is over one task"
    run = make_run(tmp_path, model="solo", levels=range(1, 2))
    for episode in (run / "episodes").iterdir():
        if not episode.name.startswith("01-04-03"):
            shutil.rmtree(episode)
    assert main([str(run)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^1 .* tasks-(\s|$)", out, re.MULTILINE)
    legend_line = next(line for line in out.splitlines() if line.startswith("k/n proportion"))
    assert legend in legend_line
    assert main([str(two_models[1])]) == 0  # four tasks a level: every cell has an interval
    out = capsys.readouterr().out
    assert not re.search(r"tasks-(\s|$)", out) and legend not in out
