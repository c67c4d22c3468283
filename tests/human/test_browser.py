"""Scripted participants in a real headless Chromium pass 01-04-03, by scripts and by keys."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from llm_aai.analysis import load_runs
from llm_aai.logs.store import read_result
from llm_aai.replay import load_episode, resimulate
from llm_aai.view import build_site
from tests.human.conftest import SCRIPTS_0403, served

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LEFT_TAPS_0403 = 5
"""Steps turning left (6 degrees each) that face 01-04-03's green ball; then forward."""


@pytest.fixture(scope="module")
def study(testbed_dir, tmp_path_factory):
    """One server for the module, on 01-04-03 only."""
    with served(tmp_path_factory.mktemp("human-browser"), testbed_dir, "01-04-03") as running:
        yield running


def _until(condition, timeout=60.0):
    """Poll ``condition`` (the page's CSP forbids Playwright's evaluated predicates)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _begin(page, study, participant, query=""):
    page.goto(f"{study.url}/{query}")
    page.get_by_test_id("participant").fill(participant)
    page.get_by_test_id("start").click()
    page.wait_for_url(f"{study.url}/play")


def test_a_participant_passes_01_04_03_by_scripts_and_survives_a_reload(page, study, artifacts):
    page.goto(f"{study.url}/")
    assert "Go(n): move straight ahead" in page.inner_text("#system-prompt")  # the models' text
    _begin(page, study, "browser-scripts")
    main = page.locator("main")
    submit = page.get_by_test_id("submit-script")
    submit.wait_for(state="visible")
    expect(main).to_have_attribute("data-phase", "your_turn", timeout=60_000)
    assert page.get_by_test_id("health").inner_text().startswith("Your remaining health is")
    assert page.locator("#earlier img").count() == 2  # three opening pictures
    page.get_by_test_id("script-input").fill("Go(3)")  # refused, as a model's would be
    submit.click()
    expect(main).to_have_attribute("data-replies", "1", timeout=60_000)
    expect(main).to_have_attribute("data-phase", "your_turn", timeout=60_000)
    assert "could not be carried out" in page.get_by_test_id("feedback").inner_text()
    health = page.get_by_test_id("health").inner_text()
    page.reload()  # the session and its level survive
    expect(main).to_have_attribute("data-phase", "your_turn", timeout=60_000)
    assert main.get_attribute("data-replies") == "1"
    assert page.get_by_test_id("health").inner_text() == health
    for number, script in enumerate(SCRIPTS_0403, start=2):
        page.get_by_test_id("script-input").fill(script)
        submit.click()
        expect(main).to_have_attribute("data-replies", str(number), timeout=60_000)
    expect(main).to_have_attribute("data-phase", "done", timeout=60_000)
    assert "The level is over" in page.get_by_test_id("message").inner_text()
    assert page.get_by_test_id("observation").get_attribute("src").startswith(
        "data:image/jpeg;base64,")
    page.screenshot(path=str(artifacts / "human-scripts.png"))
    result = read_result(study.out / "human-script-browser-scripts" / "episodes" / "01-04-03_t1")
    assert result.passed and result.agent == "human" and result.scripts_used == 3
    assert page.problems == []


def test_a_participant_passes_01_04_03_with_the_arrow_keys(page, study, artifacts, tmp_path):
    _begin(page, study, "browser-keys", "?control=keys")
    main = page.locator("main")
    expect(main).to_have_attribute("data-phase", "playing", timeout=60_000)
    hint = page.get_by_test_id("hint")
    expect(hint).to_be_visible()
    assert "Press an arrow key to start the level" in hint.inner_text()
    for _ in range(LEFT_TAPS_0403):  # one step each: wait for a step to act on the key
        page.keyboard.press("ArrowLeft")
        _until(lambda: int(main.get_attribute("data-applied") or 0)
               >= int(main.get_attribute("data-sent")))
    expect(hint).to_be_hidden()  # play has started
    page.keyboard.down("ArrowUp")
    expect(main).to_have_attribute("data-phase", "done", timeout=60_000)
    expect(hint).to_be_hidden()
    page.keyboard.up("ArrowUp")
    assert "The level is over" in page.get_by_test_id("message").inner_text()
    assert int(main.get_attribute("data-replies")) > LEFT_TAPS_0403
    page.screenshot(path=str(artifacts / "human-keys.png"))
    run_dir = study.out / "human-keys-browser-keys"
    result = read_result(run_dir / "episodes" / "01-04-03_t1")
    assert result.passed and result.end_reason == "good_goal"
    assert result.scripts_used > LEFT_TAPS_0403  # one reply per step
    assert page.problems == []
    runs = load_runs([run_dir])
    assert list(runs.episodes["label"]) == ["human (action control)"]  # never pooled with scripts
    replayed = resimulate(load_episode(run_dir / "episodes" / "01-04-03_t1"),
                          arenas_dir=study.study.base.arenas_dir)
    assert replayed.ok, replayed.render()
    report = build_site([run_dir], tmp_path / "site")
    assert report.problems == [] and (tmp_path / "site" / "index.html").is_file()


def test_an_open_script_page_keeps_its_session_from_a_take_over(browser, testbed_dir, tmp_path):
    with served(tmp_path, testbed_dir, takeover_after=1.0) as running:
        context = browser.new_context()
        page = context.new_page()
        _begin(page, running, "thinking")
        expect(page.locator("main")).to_have_attribute("data-phase", "your_turn",
                                                       timeout=60_000)
        time.sleep(2.5)  # the participant thinks: no script sent, the page only says it is open
        with running.client() as stranger:
            refused = stranger.post("/api/sessions", json={"participant": "thinking"})
            assert refused.status_code == 409, refused.text
        context.close()  # the browser is closed
        time.sleep(1.5)
        with running.client() as back:
            assert back.post("/api/sessions", json={"participant": "thinking"}).status_code \
                == 200
