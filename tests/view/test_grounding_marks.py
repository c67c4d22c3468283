"""The episode page marks each Think's claims with their verdicts once the run is grounded."""

from __future__ import annotations

import csv
import shutil

import pytest

from llm_aai.view import build_site
from tests.grounding.conftest import claims_run, grounded  # noqa: F401 - fixtures reused

PAGE = "episode/claims/01-04-03_t1.html"


def _false_claims(run) -> list[dict[str, str]]:
    with (run / "grounding.csv").open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if row["verdict"] == "false"]


@pytest.mark.browser
def test_each_think_shows_its_claims_verdicts_and_the_truth(grounded, page, tmp_path,  # noqa: F811
                                                           artifacts):
    out = tmp_path / "site"
    assert build_site([grounded], out).problems == []
    page.goto((out / PAGE).as_uri())
    first = page.locator("article.turn").first
    assert first.locator("li.claim").count() == 14  # the first Think's fourteen claims
    hidden = first.locator("li.claim.verdict-false").first
    assert hidden.locator(".kind").inner_text() == "seen"
    assert hidden.locator("q").inner_text() == "I see a red ball straight ahead"
    assert hidden.get_attribute("title").startswith("red ball at +0 deg, 14.0 m, hidden")
    false = page.locator("li.claim.verdict-false")
    assert false.count() == len(_false_claims(grounded))
    assert page.locator("li.claim.verdict-unverifiable").count() == 1
    colour = hidden.locator(".verdict").evaluate("e => getComputedStyle(e).color")
    assert colour == "rgb(198, 40, 40)"  # false in red
    page.screenshot(path=str(artifacts / "episode-grounded.png"), full_page=True)
    assert page.problems == []


def test_an_ungrounded_run_shows_its_thinks_without_marks(claims_run, tmp_path):  # noqa: F811
    run = tmp_path / "claims"
    shutil.copytree(claims_run, run)
    out = tmp_path / "site"
    assert build_site([run], out).problems == []
    html = (out / PAGE).read_text()
    assert 'class="think"' in html and 'class="claims"' not in html
    (run / "grounding.csv").write_text("episode,turn\n01-04-03_t1,1\n")
    assert build_site([run], out).problems == []
    html = (out / PAGE).read_text()
    assert "claims not shown: " in html and "missing column(s)" in html
