"""``audit.csv`` rows as typed records: read as the audit wrote them, written back the same."""

from __future__ import annotations

import csv
import io

import pytest

from llm_aai.audit.rows import COLUMNS, AuditRow, AuditRowError
from llm_aai.audit.run import CSV_FILE, read_rows

WRITTEN = """\
task_id,level,seed,solved,reward,pass_mark,file_pass_mark,steps,scripts,searched,search_seconds,end_reason,status,unity_passed,unity_entrants,unity_top10,children_rate,physics_build
01-06-02,1,1,True,2.801,2.0,2.0,82,1,33,0.642,good_goal,ok,53,60,10,0.8814,3.x
08-30-01,8,1,False,-1.0423,0.5,0.5,700,3,14000,33.1,death_zone,ok,32,60,9,0.5405,3.x
01-01-02,1,2,False,,,,,,,0.012,,crash: ArenaError: bad.yaml:1: unexpected end,,,,,2019
01-01-03,1,1,False,,,,,,,,,crash: the worker process died,4,60,2,,3.x
"""
"""Rows as the audit wrote them before rows were typed: a solved and a failed episode, a task
that crashed in its worker, a worker that died."""


def _write(rows) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(row.to_csv() for row in rows)
    return buffer.getvalue()


def test_rows_read_typed_and_write_back_byte_for_byte(tmp_path):
    (tmp_path / CSV_FILE).write_text(WRITTEN)
    rows = read_rows(tmp_path)
    solved, failed, crashed, died = rows
    assert solved.solved and solved.reward == 2.801 and solved.steps == 82 and solved.ok
    assert solved.children_rate == 0.8814 and solved.unity_passed == 53
    assert not failed.solved and failed.reward == -1.0423 and failed.end_reason == "death_zone"
    assert crashed.reward is None and crashed.pass_mark is None and not crashed.ok
    assert crashed.search_seconds == 0.012 and crashed.unity_passed is None
    assert crashed.physics_build == "2019" and crashed.status.startswith("crash: ArenaError")
    assert died.search_seconds is None and died.unity_top10 == 2
    # written back under today's header: where each ran was not recorded then (empty)
    assert _write(rows) == "".join(line + (",node_id,host" if n == 0 else ",,") + "\n"
                                   for n, line in enumerate(WRITTEN.splitlines()))


def test_where_a_row_ran_round_trips():
    row = AuditRow("02-03-01", 2, 3, True, 1.5, physics_build="3.x", node_id="ab12", host="w1")
    assert AuditRow.from_csv(row.to_csv()) == row


def test_a_row_round_trips():
    row = AuditRow("02-03-01", 2, 3, True, 1.5, 0.0, 0.5, 120, 2, 900, 1.25, "good_goal", "ok",
                   12, 60, 5, None, "3.x")
    assert AuditRow.from_csv(row.to_csv()) == row
    assert row.to_csv()["children_rate"] == "" and row.to_csv()["pass_mark"] == "0.0"


def test_a_cell_of_the_wrong_type_names_the_line_and_column(tmp_path):
    (tmp_path / CSV_FILE).write_text(WRITTEN.replace("True,2.801", "yes,2.801"))
    with pytest.raises(AuditRowError, match=r"audit.csv:2: column solved: expected True or "
                                            r"False, got 'yes'"):
        read_rows(tmp_path)
