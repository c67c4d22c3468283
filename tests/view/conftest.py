"""Small real runs to build sites from, and a real headless Chromium to look at them.

The runs are made once per session with the real runner and simulator at 64 px: the
heuristic agent on one task, and an LLM over HTTP (the fake server) whose replies think,
break the grammar and try to inject markup, so the pages show every kind of turn.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.view import build_site
from llm_aai.view.browser import CHROMIUM_ENV, CHROMIUM_FLAGS, find_chromium
from tests.helpers.runs import make_run

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts" / "view"
"""Screenshots of each page kind land here (git-ignored), for a person or CI to look at."""

INJECTION = '<script>document.title="pwned"</script><img src=x onerror="alert(1)">'
LLM_REPLIES = [
    'Think("The ball is green & round; I turn right <b>a bit</b>.");Turn(30);Go(6);',
    f"I refuse to write a script. {INJECTION}",
    'Think("Forward now.");Go(5);',
]


@pytest.fixture(scope="session")
def small_runs(testbed_dir, tmp_path_factory) -> dict[str, Path]:
    """Run directories on 01-04-03: ``heuristic`` (2 trials) and ``llm`` (3 scripts)."""
    out = tmp_path_factory.mktemp("view-runs")
    made = {"heuristic": make_run(testbed_dir, out, "heuristic", "--model", "heuristic",
                              "--tasks", "01-04-03", "--trials", "2", "--max-scripts", "6")}
    with pytest.MonkeyPatch.context() as patch, FakeChatServer(LLM_REPLIES) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test-view")
        made["llm"] = make_run(testbed_dir, out, "llm", "--model", "openai/fake", "--api-base",
                           server.url, "--tasks", "01-04-03", "--max-scripts",
                           str(len(LLM_REPLIES)))
    return made


@pytest.fixture(scope="session")
def site(small_runs, tmp_path_factory) -> Path:
    """The site built from both runs."""
    out = tmp_path_factory.mktemp("view-site") / "site"
    report = build_site([small_runs["heuristic"], small_runs["llm"]], out)
    assert report.problems == []
    return out


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by Playwright, for one test module.

    Module-scoped, not session-scoped: Playwright's sync API holds an asyncio loop running in
    the main thread while it is open, and every later test that runs its own loop (the
    Inspect tests, after tests/human in collection order) failed with "Runner.run() cannot
    be called from a running event loop".

    Skipped, with the reason, where no Chromium is installed; CI sets
    ``LLM_AAI_REQUIRE_BROWSER=1`` (``.ci/run`` installs it), and there a missing browser fails.
    """
    required = os.environ.get("LLM_AAI_REQUIRE_BROWSER") == "1"
    executable = find_chromium()
    if executable is not None and not os.access(executable, os.X_OK):
        pytest.fail(f"{CHROMIUM_ENV}={executable}: not an executable file")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        reason = f"browser tests need playwright (pip install -e '.[test]'): {error}"
        pytest.fail(reason) if required else pytest.skip(reason)
    if executable is None:
        reason = ("browser tests need Chromium: apt-get install chromium (Debian/Ubuntu), or "
                  "set LLM_AAI_CHROMIUM to a Chromium or Chrome executable")
        pytest.fail(reason) if required else pytest.skip(reason)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable,
                                              args=list(CHROMIUM_FLAGS))
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh page that records console messages and uncaught errors in ``page.problems``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda message: problems.append(f"console {message.type}: "
                                                         f"{message.text}")
              if message.type in ("error", "warning") else None)
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"),
                                        dialog.dismiss()))
    opened.problems = problems
    yield opened
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots are saved (``artifacts/view`` in the checkout, git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
