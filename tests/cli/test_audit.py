"""``python -m llm_aai.audit`` end to end: real worker processes, real files, real testbed."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from llm_aai.audit.rows import COLUMNS
from llm_aai.cli import audit as audit_cli
from tests.helpers.runs import audit_rows, run_module
from tests.helpers.signals import has_lines, start_module, stop, wait_until

BUDGET = "1500"


def audit(*args, timeout=600):
    return run_module("llm_aai.audit", *args, timeout=timeout)


def rows(out: Path) -> list[dict]:
    return audit_rows(out)


@pytest.mark.slow
def test_audit_writes_rows_and_a_report_and_resumes(testbed_dir, tmp_path):
    out = tmp_path / "audit"
    tasks = "01-01-01,01-04-03,02-02-01"
    args = ["--out", out, "--tasks", tasks, "--arenas-dir", testbed_dir, "--workers", "2",
            "--oracle-budget", BUDGET, "--no-progress"]
    proc = start_module("llm_aai.audit", *args)
    # interrupt once the first row is written (2 lines: the header, a row), unless it is done
    wait_until(lambda: proc.poll() is not None or has_lines(out / "audit.csv", 2)(),
               poll=0.2)
    if proc.poll() is None:
        _, err = stop(proc, signal.SIGINT, timeout=300)
    else:
        _, err = proc.communicate(timeout=300)
    kept = rows(out)
    assert kept, err
    if proc.returncode != 0:  # interrupted: says how to resume, keeps what was done
        assert proc.returncode == 130 and "resume" in err
    first_lines = (out / "audit.csv").read_text().splitlines()
    done = audit(*args)
    assert done.returncode == 0, done.stderr
    final = rows(out)
    assert sorted(r["task_id"] for r in final) == sorted(tasks.split(","))  # no repeats
    # rows written before the interruption are kept byte for byte
    assert (out / "audit.csv").read_text().splitlines()[: len(first_lines)] == first_lines
    for row in final:
        assert row["status"] == "ok"
        assert row["solved"] == "True"
        assert int(row["unity_passed"]) >= 1 and row["unity_entrants"] == "60"
    by_task = {r["task_id"]: r for r in final}
    assert by_task["01-04-03"]["children_rate"] != ""  # a children task
    assert by_task["01-01-01"]["children_rate"] == ""
    report = (out / "audit.md").read_text()
    assert "| all | | 3 / 736 | 3 | 100.0 % |" in report
    assert "python -m llm_aai.audit" in report and "not the whole testbed" in report
    assert report in done.stdout
    # other settings on the same directory are refused, nothing is lost
    again = audit("--out", out, "--tasks", tasks, "--arenas-dir", testbed_dir,
                  "--oracle-budget", "99", "--no-progress")
    assert again.returncode == 2 and "settings" in again.stderr
    assert rows(out) == final


def test_unknown_task_and_missing_testbed_are_clear_errors(tmp_path):
    out = tmp_path / "audit"
    unknown = audit("--out", out, "--tasks", "99-99-99", "--no-progress")
    assert unknown.returncode == 2
    assert "99-99-99" in unknown.stderr
    missing = audit("--out", out, "--tasks", "01-01-01", "--arenas-dir", tmp_path / "nowhere",
                    "--no-progress")
    assert missing.returncode == 2
    assert "nowhere" in missing.stderr
    assert not (out / "audit.csv").exists()


def test_a_task_that_fails_is_recorded_and_the_audit_goes_on(testbed_dir, tmp_path):
    arenas = tmp_path / "arenas"
    arenas.mkdir()
    shutil.copy(Path(testbed_dir) / "01-01-01.yaml", arenas)
    (arenas / "01-01-02.yaml").write_text("!ArenaConfig\narenas: {0: !Arena {items: [}}\n")
    out = tmp_path / "audit"
    result = audit("--out", out, "--tasks", "01-01-01,01-01-02", "--arenas-dir", arenas,
                   "--oracle-budget", BUDGET, "--no-progress")
    assert result.returncode == 0, result.stderr
    by_task = {r["task_id"]: r for r in rows(out)}
    assert by_task["01-01-01"]["status"] == "ok" and by_task["01-01-01"]["solved"] == "True"
    assert by_task["01-01-02"]["status"].startswith("crash: ArenaError")
    assert by_task["01-01-02"]["solved"] == "False"
    assert "01-01-02 seed 1: crash: ArenaError" in (out / "audit.md").read_text()


def test_report_only_needs_an_audit(tmp_path):
    result = audit("--out", tmp_path, "--report-only")
    assert result.returncode == 2 and "no audit.csv" in result.stderr


def test_a_damaged_audit_csv_is_one_clear_line(tmp_path):
    (tmp_path / "audit.csv").write_text(",".join(COLUMNS) + "\n01-01-01,one,1,True"
                                        + "," * (len(COLUMNS) - 4) + "\n")
    result = audit("--out", tmp_path, "--report-only")
    assert result.returncode == 2
    assert result.stderr.strip().endswith("audit.csv:2: column level: invalid literal for "
                                          "int() with base 10: 'one'")




def test_ctrl_c_while_the_report_is_written_keeps_the_rows_and_says_how_to_resume(
        testbed_dir, tmp_path, monkeypatch, capsys):
    """The last episode may end just before Ctrl-C lands: the answer is the same as mid-audit."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    out = tmp_path / "audit"
    argv = ["--out", str(out), "--tasks", "01-01-01", "--arenas-dir", str(testbed_dir),
            "--workers", "1", "--oracle-budget", BUDGET, "--no-progress", "--no-other-build"]
    with monkeypatch.context() as patch:
        patch.setattr(audit_cli, "write_report", interrupted)
        assert audit_cli.main(argv) == 130
    assert "run the same command again to resume" in capsys.readouterr().err
    assert [row["task_id"] for row in rows(out)] == ["01-01-01"]
    assert sorted(path.name for path in out.iterdir() if path.name.endswith(".md")) == []
    assert audit_cli.main(argv) == 0  # the rerun resumes: nothing to play, the report written
    assert [row["task_id"] for row in rows(out)] == ["01-01-01"]
    assert (out / "audit.md").read_text(encoding="utf-8").startswith("#")
