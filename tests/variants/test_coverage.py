"""``python -m llm_aai.variants coverage DIR``: the coverage report of a made folder."""

from __future__ import annotations

import pytest

from llm_aai.cli import variants as variants_cli
from llm_aai.cli.variants import main as variants
from llm_aai.variants.generate import PROGRESS_FILE
from llm_aai.variants.index import INDEX_FILE, read_rows, write_rows


def test_coverage_reports_the_share_per_level_and_why_tasks_fall_short(testbed_dir, tmp_path,
                                                                       capsys):
    out = tmp_path / "made"
    assert variants(["make", "01-04-03", "01-20-01", "04-05-02", "04-22-01", "--count", "1",
                     "--out", str(out), "--arenas-dir", str(testbed_dir)]) == 0
    capsys.readouterr()
    report = tmp_path / "coverage.md"
    assert variants(["coverage", str(out), "--out", str(report)]) == 0
    text = report.read_text()
    assert f"python -m llm_aai.variants coverage {out} --out {report}" in text
    assert "Partial" not in text
    assert "| with >= 1 validated variants | 3 (75.0 % of 4; goal >= 95 %: not met) |" in text
    assert "| of the finished transformable ones | 3 / 3 (100.0 %) |" in text
    assert "| 1 | Food Retrieval | 2 | 2 | 1 | 50.0 % |" in text
    assert "| 4 | Avoidance | 2 | 2 | 2 | 100.0 % |" in text
    assert "| parent task | layout cannot be transformed | 1 |" in text
    assert "| 01-20-01 | 0 | layout cannot be transformed |" in text
    # 04-22-01's bridge over a death zone holds only in the 2019 build (docs/testbed-audit.md)
    assert ("| tasks whose variants were checked in another build than 3.x | 1: 04-22-01 |"
            in text)
    assert "Tasks whose every object is placed at random (1) count against the goal" in text

    # the same folder as an interrupted make leaves it: 04-05-02 not finished
    rows = [row for row in read_rows(out) if row["parent"] != "04-05-02"]
    write_rows(out, rows)
    assert variants(["coverage", str(out)]) == 0
    partial = capsys.readouterr().out
    assert "**Partial:** 3 of 4 Unity-passed tasks finished so far" in partial
    assert "## Not finished yet (1)\n\n04-05-02" in partial
    assert "goal >= 95 %: not met so far" in partial


def test_a_folder_without_its_request_is_refused(tmp_path, capsys):
    (tmp_path / INDEX_FILE).write_text("variant_id\n")
    assert variants(["coverage", str(tmp_path)]) == 2
    assert "cannot report its coverage" in capsys.readouterr().err
    assert not (tmp_path / PROGRESS_FILE).exists()


def test_a_report_whose_write_fails_leaves_the_earlier_one(tmp_path, monkeypatch):
    report = tmp_path / "coverage.md"
    report.write_text("the earlier report\n")
    # a lone surrogate cannot be encoded: the write fails after its first line, as a full
    # disk would
    monkeypatch.setattr(variants_cli, "coverage_markdown",
                        lambda folder, command: "# Coverage\n" + "x" * 100_000 + "\ud800")
    with pytest.raises(UnicodeEncodeError):
        variants(["coverage", str(tmp_path), "--out", str(report)])
    assert report.read_text() == "the earlier report\n"
    assert [p.name for p in tmp_path.iterdir()] == [report.name]
