"""The site in a real headless Chromium: every page kind loads cleanly and behaves.

Each test opens the built site from disk (``file://``), as a reader of a zip would, and saves
a screenshot of the page kind under ``artifacts/view/``.
"""

from __future__ import annotations

import pytest

from llm_aai.logs.store import read_turns

pytestmark = pytest.mark.browser

PAGES = {
    "runs": "index.html",
    "episodes": "episodes.html",
    "episode": "episode/llm/01-04-03_t1.html",
    "task": "task/01-04-03.html",
}


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_each_page_kind_loads_without_console_errors(kind, page, site, artifacts):
    page.goto((site / PAGES[kind]).as_uri())
    page.wait_for_load_state("load")
    page.screenshot(path=str(artifacts / f"{kind}-page.png"), full_page=kind != "episode")
    assert page.problems == []
    assert page.title().endswith("llm-aai view")
    broken = page.evaluate("Array.from(document.images).filter(i => i.hasAttribute('src') && "
                           "i.complete && i.naturalWidth === 0 && i.loading !== 'lazy')"
                           ".map(i => i.src)")
    assert broken == []


def test_filters_narrow_the_episode_list(page, site):
    page.goto((site / "episodes.html").as_uri())
    rows = page.locator("#episodes tbody tr")
    assert rows.count() == 3
    page.select_option("select[data-filter=label]", "heuristic")
    assert page.locator("#episodes tbody tr:visible").count() == 2
    page.select_option("select[data-filter=trial]", "2")
    visible = page.locator("#episodes tbody tr:visible")
    assert visible.count() == 1
    assert visible.first.get_attribute("data-trial") == "2"
    assert page.inner_text("#count") == "1 of 3 episodes"
    page.select_option("select[data-filter=label]", "")
    page.select_option("select[data-filter=trial]", "")
    page.select_option("select[data-filter=passed]", "yes")
    assert page.locator("#episodes tbody tr:visible").count() == 0
    page.select_option("select[data-filter=passed]", "")
    page.fill("input[data-max=scripts_used]", "3")  # the LLM episode used 3, the others 6
    visible = page.locator("#episodes tbody tr:visible")
    assert visible.count() == 1 and visible.first.get_attribute("data-label") == "openai/fake"
    page.fill("input[data-max=scripts_used]", "")
    page.fill("input[data-min=reward]", "1000")
    assert page.locator("#episodes tbody tr:visible").count() == 0
    assert page.problems == []


def test_sorting_orders_the_episode_list(page, site):
    page.goto((site / "episodes.html").as_uri())
    header = page.locator("#episodes th", has_text="Scripts")
    header.click()
    ascending = [int(v) for v in page.locator("#episodes tbody tr td:nth-child(9)")
                 .all_inner_texts()]
    assert ascending == sorted(ascending)
    header.click()
    descending = [int(v) for v in page.locator("#episodes tbody tr td:nth-child(9)")
                  .all_inner_texts()]
    assert descending == sorted(ascending, reverse=True)


def test_episode_page_shows_every_turn_and_image_of_the_log(page, site, small_runs):
    turns = [t for t in read_turns(small_runs["llm"] / "episodes" / "01-04-03_t1")
             if t.turn > 0]
    page.goto((site / PAGES["episode"]).as_uri())
    assert page.locator("article.turn").count() == len(turns)
    thumbs = page.locator("a.thumb img")
    assert thumbs.count() == sum(len(t.sent_images) for t in turns)
    for index in range(thumbs.count()):  # lazy images: bring each into view, then check it
        thumbs.nth(index).scroll_into_view_if_needed()
    page.wait_for_function("Array.from(document.querySelectorAll('a.thumb img'))"
                           ".every(i => i.complete && i.naturalWidth > 0)")
    assert page.title() != "pwned"  # the injected <script> stayed text
    assert page.problems == []


def test_thumbnail_opens_the_full_image_and_keys_move_between_turns(page, site, artifacts):
    page.goto((site / PAGES["episode"]).as_uri())
    page.locator("a.thumb").first.click()
    dialog = page.locator("dialog#lightbox")
    assert dialog.is_visible()
    assert page.evaluate("document.querySelector('#lightbox img').naturalWidth") > 0
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.locator("article.turn.current").get_attribute("data-turn") == "2"
    assert page.locator(".arena-map .turn-mark.current").get_attribute("data-turn") == "2"
    page.keyboard.press("ArrowLeft")
    assert page.locator("article.turn.current").get_attribute("data-turn") == "1"
    assert page.url.endswith("#turn-1")
    page.screenshot(path=str(artifacts / "episode-turn.png"))
    assert page.problems == []


def test_the_map_shows_the_path(page, site, small_runs):
    records = read_turns(small_runs["heuristic"] / "episodes" / "01-04-03_t1")
    page.goto((site / "episode/heuristic/01-04-03_t1.html").as_uri())
    line = page.locator(".arena-map .path-line")
    assert line.count() == 1
    box = line.bounding_box()
    assert box is not None and max(box["width"], box["height"]) > 20  # drawn, not a dot
    assert page.locator(".arena-map .turn-mark").count() == sum(1 for r in records if r.state)
    assert page.locator(".arena-map .obj-goal").count() >= 1
    assert page.locator(".health-curve .turn-dot").count() == len(records) + 1


def test_task_page_overlays_every_episode_path(page, site):
    page.goto((site / PAGES["task"]).as_uri())
    assert page.locator(".overlay .arena-map .path-line").count() == 3
    assert page.locator(".side-by-side .cell").count() == 3
    assert "Children 6-10 (n=59)" in page.inner_text("table.reference")
