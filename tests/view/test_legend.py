"""The runs page explains ``tasks[..]`` and ``tasks-`` in its pass-rate table, in words."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from llm_aai.analysis.stats import format_clustered_rate
from llm_aai.view.legend import LEGEND, NO_TASK_INTERVAL, OVER_TASKS, cell_title


class _Cells(HTMLParser):
    """The report table's cells as ``(title, text)``, and the legend's items."""

    def __init__(self):
        super().__init__()
        self.cells: list[tuple[str | None, str]] = []
        self.marks: list[str] = []
        self._in: str | None = None
        self._title: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td":
            self._in, self._title = "td", attrs.get("title")
            self.cells.append((self._title, ""))
        elif tag == "ul" and "marks" in (attrs.get("class") or "").split():
            self._in = "marks"
        elif tag == "li" and self._in == "marks":
            self.marks.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "ul"):
            self._in = None

    def handle_data(self, data):
        if self._in == "td":
            title, text = self.cells[-1]
            self.cells[-1] = (title, text + data)
        elif self._in == "marks" and self.marks:
            self.marks[-1] += data


def test_the_analysis_writes_the_marks_the_legend_explains():
    """The cells come from the analysis: two tasks give an interval, one gives ``tasks-``."""
    assert " tasks[" in format_clustered_rate([1, 0, 1, 1], ["a", "a", "b", "b"])
    assert format_clustered_rate([1, 0], ["a", "a"]).endswith(" tasks-")


@pytest.mark.parametrize(("cell", "explained"), [
    ("3/12 0.25 [0.09, 0.53] tasks[0.00, 0.75]", OVER_TASKS),
    ("0/2 0.00 [0.00, 0.66] tasks-", NO_TASK_INTERVAL),
])
def test_a_cell_with_an_interval_over_tasks_or_none_says_what_it_is(cell, explained):
    title = cell_title(cell)
    assert explained in title and "Wilson" in title


@pytest.mark.parametrize("cell", ["1", "Food Retrieval", "0.60 (IQR [0.50, 0.75])",
                                  "0.90 (1 of 4 tasks)", "0/0 (2 infra)", "-", 3.0, None])
def test_other_cells_get_no_title(cell):
    assert cell_title(cell) is None


def test_the_runs_page_explains_each_mark_under_the_table_and_on_the_cell(site):
    page = _Cells()
    page.feed((site / "index.html").read_text(encoding="utf-8"))
    assert [mark.strip() for mark in page.marks] == list(LEGEND)
    assert any("tasks-" in mark and "fewer than two tasks" in mark for mark in page.marks)
    assert any(mark.startswith("tasks[low, high]:") for mark in page.marks)
    flagged = [(title, text) for title, text in page.cells if text.endswith(" tasks-")]
    assert flagged, page.cells  # one task played: the runs' cells read tasks-
    assert all(title and NO_TASK_INTERVAL in title for title, _ in flagged)
    assert all(title is None for title, text in page.cells if "tasks" not in text)
