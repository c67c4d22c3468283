"""The site built from real runs: complete, linked, escaped, and rebuilt as runs grow."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from llm_aai.cli.main import main as llm_aai
from llm_aai.cli.view import main as view_main
from llm_aai.logs.store import read_turns
from llm_aai.view import SiteBuilder, build_site, serve

from .conftest import INJECTION


class _Links(HTMLParser):
    """Every local href/src of a page, and the element ids it defines."""

    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)
            if name == "id":
                self.ids.add(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def broken_links(site: Path) -> list[str]:
    """Links from any page to a file that is not in the site, or to a missing anchor."""
    broken = []
    pages = sorted(site.rglob("*.html"))
    ids = {page.resolve(): _parse(page).ids for page in pages}
    for page in pages:
        for link in _parse(page).links:
            parts = urlsplit(link)
            if parts.scheme == "data":
                continue  # inline, so offline too
            if parts.scheme:
                broken.append(f"{page}: external link {link}")  # the site must work offline
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_relative_to(site.resolve()) or not target.is_file():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif parts.fragment and target.suffix == ".html" and (
                    parts.fragment not in ids[target.resolve()]):
                broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    return broken


def test_every_link_and_image_of_the_site_resolves(site):
    assert broken_links(site) == []
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    assert {"index.html", "episodes.html", "task/01-04-03.html",
            "episode/heuristic/01-04-03_t1.html", "episode/heuristic/01-04-03_t2.html",
            "episode/llm/01-04-03_t1.html"} <= pages


def test_link_check_finds_a_missing_frame(site, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    frame = next((copy / "data" / "llm").rglob("*.jpg"))
    frame.unlink()
    assert any(frame.name in line for line in broken_links(copy))


def test_episode_page_holds_every_turn_and_image_of_the_log(site, small_runs):
    episode = small_runs["llm"] / "episodes" / "01-04-03_t1"
    turns = [t for t in read_turns(episode) if t.turn > 0]
    html = (site / "episode/llm/01-04-03_t1.html").read_text(encoding="utf-8")
    assert html.count('<article class="turn"') == len(turns)
    assert html.count('class="thumb"') == sum(len(t.sent_images) for t in turns)
    for turn in turns:
        for image in turn.sent_images:
            assert (site / "data/llm/01-04-03_t1" / image).read_bytes() == (
                episode / image).read_bytes()


def test_model_text_is_escaped_and_think_text_set_apart(site):
    html = (site / "episode/llm/01-04-03_t1.html").read_text(encoding="utf-8")
    assert INJECTION not in html
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in html
    assert ('<blockquote class="think">The ball is green &amp; round; I turn right '
            "&lt;b&gt;a bit&lt;/b&gt;.</blockquote>") in html
    assert '<code>Turn(30); Go(6);</code>' in html
    assert 'class="parse-error"' in html and "feedback sent" in html


def test_map_draws_the_arena_and_the_path_of_every_turn(site, small_runs):
    episode = small_runs["heuristic"] / "episodes" / "01-04-03_t1"
    states = [t.state for t in read_turns(episode) if t.state]
    html = (site / "episode/heuristic/01-04-03_t1.html").read_text(encoding="utf-8")
    svg = html[html.index('<svg class="arena-map"'):]
    svg = svg[:svg.index("</svg>")]
    points = svg[svg.index('class="path-line" points="') + 26:].split('"')[0].split()
    assert len(points) == len(states)
    x, z = states[-1]["position"][0], states[-1]["position"][2]
    assert points[-1] == f"{x:.3f},{40 - z:.3f}"
    # 01-04-03 fixes its GoodGoal at (1.1, 38.9): drawn at y = 40 - 38.9.
    assert '<circle class="obj obj-goal" fill="#81bf41"' in svg
    assert 'cx="1.100" cy="1.100"' in svg
    assert svg.count('class="turn-number"') == len(states) - 1  # turn 0 is the start


def test_arena_missing_shows_the_path_alone_with_the_reason(small_runs, tmp_path,
                                                            monkeypatch):
    run = tmp_path / "run"
    shutil.copytree(small_runs["heuristic"], run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["run"]["config"]["arenas_dir"] = str(tmp_path / "nowhere")
    if manifest.get("arenas_location"):  # where the run found them: gone too
        manifest["arenas_location"]["folder"] = str(tmp_path / "nowhere")
    (run / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("LLM_AAI_ARENAS", str(tmp_path / "nowhere"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    build_site([run], tmp_path / "site")
    html = (tmp_path / "site/episode/heuristic/01-04-03_t1.html").read_text(encoding="utf-8")
    assert "arena not drawn:" in html and 'class="path-line"' in html
    assert 'class="obj ' not in html


def test_runs_page_shows_settings_totals_and_the_comparison(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    for text in ("prompt sha256", "resolution", "Children 6-10 (n=59)",
                 "AAI Olympics 2019 top 10", "infrastructure failures", "invalid replies",
                 "unknown (no price)", "$0 (no model calls)"):
        assert text in html, text
    assert (site / "assets/pass-rates.svg").stat().st_size > 1000


def test_a_hostile_run_id_stays_inside_the_site(small_runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(small_runs["heuristic"], run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["run_id"] = "../../escape"
    (run / "manifest.json").write_text(json.dumps(manifest))
    build_site([run], tmp_path / "site")
    assert not (tmp_path / "escape").exists()
    assert [p.name for p in (tmp_path / "site/episode").iterdir()] == ["escape"]
    assert broken_links(tmp_path / "site") == []


def test_rebuild_renders_only_new_episodes(small_runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(small_runs["heuristic"], run)
    held = tmp_path / "held"
    shutil.move(run / "episodes" / "01-04-03_t2", held)
    builder = SiteBuilder([run], tmp_path / "site")
    first = builder.build()
    assert (first.episodes, first.rendered) == (1, 1)
    shutil.move(held, run / "episodes" / "01-04-03_t2")
    second = builder.build()
    assert (second.episodes, second.rendered) == (2, 1)
    assert "01-04-03_t2" in (tmp_path / "site/episodes.html").read_text(encoding="utf-8")


def test_serve_serves_the_site_and_rebuilds_when_an_episode_is_sealed(small_runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(small_runs["heuristic"], run)
    held = tmp_path / "held"
    shutil.move(run / "episodes" / "01-04-03_t2", held)
    urls, reports, stop = [], [], threading.Event()
    thread = threading.Thread(target=serve, args=(SiteBuilder([run], tmp_path / "site"), 0),
                              kwargs={"interval": 0.1, "on_build": reports.append,
                                      "ready": urls.append, "stop": stop})
    thread.start()
    try:
        _wait(lambda: urls)
        base = urls[0].rsplit("/", 1)[0]
        assert "01-04-03_t2" not in _get(f"{base}/episodes.html")
        shutil.move(held, run / "episodes" / "01-04-03_t2")
        _wait(lambda: len(reports) >= 2)
        assert "01-04-03_t2" in _get(f"{base}/episodes.html")
        assert "<svg" in _get(f"{base}/episode/heuristic/01-04-03_t2.html")
        assert urls[0].startswith("http://127.0.0.1:")
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode("utf-8")


def _wait(condition, timeout: float = 30.0) -> None:


    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("timed out waiting for the server")
        time.sleep(0.05)


def test_cli_builds_the_site_and_refuses_a_non_run_directory(small_runs, tmp_path, capsys):
    assert view_main([str(small_runs["heuristic"]), "--out", str(tmp_path / "site")]) == 0
    assert "2 episodes" in capsys.readouterr().out
    assert (tmp_path / "site/index.html").is_file()
    assert view_main([str(tmp_path), "--out", str(tmp_path / "other")]) == 2
    assert "not an llm-aai run directory" in capsys.readouterr().err


def test_llm_aai_view_and_python_m_llm_aai_view_build_the_site(small_runs, tmp_path):
    assert llm_aai(["view", str(small_runs["llm"]), "--out", str(tmp_path / "a")]) == 0
    done = subprocess.run([sys.executable, "-m", "llm_aai.view", str(small_runs["llm"]),
                           "--out", str(tmp_path / "b")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a/index.html").is_file() and (tmp_path / "b/index.html").is_file()


def test_a_malformed_turn_log_is_an_error_naming_file_and_line(small_runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(small_runs["heuristic"], run)
    turns = run / "episodes" / "01-04-03_t2" / "turns.jsonl"
    lines = turns.read_text().splitlines()
    lines[2] = lines[2][:30]
    turns.write_text("\n".join(lines) + "\n")
    assert view_main([str(run), "--out", str(tmp_path / "site")]) == 2
    assert "turns.jsonl:3:" in capsys.readouterr().err


def test_runs_whose_ids_clean_to_the_same_name_keep_apart(small_runs, tmp_path):
    runs = []
    for run_id in ("a/b", "a_b"):
        run = tmp_path / run_id.replace("/", "-")
        shutil.copytree(small_runs["llm"], run)
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["run_id"] = run_id
        (run / "manifest.json").write_text(json.dumps(manifest))
        runs.append(run)
    report = build_site(runs, tmp_path / "site")
    assert report.episodes == 2
    assert sorted(p.name for p in (tmp_path / "site/episode").iterdir()) == ["a_b", "a_b-2"]
    assert broken_links(tmp_path / "site") == []


def test_serve_keeps_the_last_site_when_a_rebuild_meets_a_malformed_log(small_runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(small_runs["heuristic"], run)
    urls, errors, stop = [], [], threading.Event()
    thread = threading.Thread(target=serve, args=(SiteBuilder([run], tmp_path / "site"), 0),
                              kwargs={"interval": 0.1, "ready": urls.append, "stop": stop,
                                      "on_error": errors.append})
    thread.start()
    try:
        _wait(lambda: urls)
        episode = run / "episodes" / "01-04-03_t2"
        (episode / "turns.jsonl").write_text("{not json\n")
        os.utime(episode / "result.json")  # as if sealed again
        _wait(lambda: errors)
        assert "turns.jsonl:1:" in str(errors[0])
        assert "01-04-03_t2" in _get(urls[0].rsplit("/", 1)[0] + "/episodes.html")
        assert thread.is_alive()
    finally:
        stop.set()
        thread.join(timeout=10)


def test_task_page_gives_the_time_limit_in_agent_steps_of_the_runs_build(site):
    html = (site / "task/01-04-03.html").read_text(encoding="utf-8")
    # t = 250 in the file: 250 units of 5 physics steps, 3 physics steps an agent step
    assert "time limit 417 agent steps (t = 250 in the arena file; 3.x build)" in html
    assert "250 steps" not in html
    episode = (site / "episode/heuristic/01-04-03_t1.html").read_text(encoding="utf-8")
    assert "agent steps (time limit 417)" in episode


def test_time_limit_per_build_when_runs_of_a_task_differ():
    from types import SimpleNamespace

    from llm_aai.view.tasks import _time_limit

    layout = SimpleNamespace(time_limit=250)
    group = [SimpleNamespace(view=SimpleNamespace(layout=layout, time_limit=417,
                                                  physics_build="3.x")),
             SimpleNamespace(view=SimpleNamespace(layout=layout, time_limit=250,
                                                  physics_build="2019")),
             SimpleNamespace(view=SimpleNamespace(layout=None, time_limit=None,
                                                  physics_build="3.x"))]
    assert _time_limit(group) == "agent steps: 250 in 2019, 417 in 3.x (t = 250 in the arena file)"
    assert _time_limit(group[:1]) == "417 agent steps (t = 250 in the arena file; 3.x build)"


def test_serve_without_out_builds_in_an_announced_temporary_folder(small_runs, tmp_path):
    import signal

    work = tmp_path / "cwd"
    work.mkdir()
    server = subprocess.Popen([sys.executable, "-m", "llm_aai.view", str(small_runs["llm"]),
                               "--serve", "0"], cwd=work, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline()
        assert first.startswith("building the site in ") and "temporary" in first
        folder = Path(first.removeprefix("building the site in ").split(" (")[0])
        assert folder.name.startswith("llm-aai-site-") and not folder.is_relative_to(work)
        lines = [first]
        while not lines[-1].startswith("serving "):
            lines.append(server.stdout.readline())
            assert lines[-1], f"the server stopped: {lines} {server.stderr.read()}"
        assert (folder / "index.html").is_file()
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert list(work.iterdir()) == [] and not folder.exists()


def test_building_without_out_puts_the_site_in_the_first_run_and_says_so(
        small_runs, tmp_path, monkeypatch, capsys):
    """Not in the current folder, where a clone's ``git status`` would show it."""
    runs = [tmp_path / "runs" / name for name in ("llm", "heuristic")]
    for run, name in zip(runs, ("llm", "heuristic"), strict=True):
        shutil.copytree(small_runs[name], run)
    work = tmp_path / "clone"
    work.mkdir()
    monkeypatch.chdir(work)
    assert view_main([str(run) for run in runs]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"building the site in {runs[0] / 'site'} (inside the run's folder")
    assert f"open {runs[0] / 'site' / 'index.html'}" in out
    assert (runs[0] / "site" / "index.html").is_file() and not (runs[1] / "site").exists()
    assert list(work.iterdir()) == []
    assert view_main([str(runs[0])]) == 0  # built again over its own site: the run still reads
    assert "1 episodes" in capsys.readouterr().out


@pytest.mark.parametrize("planted", ["symlink", "file", "dangling symlink"])
def test_a_site_in_the_run_that_is_no_folder_of_its_own_is_refused(small_runs, tmp_path,
                                                                    planted, capsys,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    shutil.copytree(small_runs["llm"], run)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if planted == "symlink":
        (run / "site").symlink_to(elsewhere, target_is_directory=True)
    elif planted == "file":
        (run / "site").write_text("not a site")
    else:
        (run / "site").symlink_to(tmp_path / "nowhere")
    assert view_main([str(run)]) == 2
    what = "not a folder" if planted == "file" else "a symlink"
    assert f"error: {run / 'site'} is {what}; the site is not written there (give --out SITE)" \
        in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "nowhere").exists()


def test_only_the_figures_own_warnings_become_problems(small_runs, tmp_path, monkeypatch):
    """A warning raised while the figure is drawn but about something else (a ResourceWarning
    of an event loop the garbage collector frees then) is shown, not reported as the site's
    problem; a model left out of the figure still is one."""
    import warnings

    from llm_aai.analysis.plots import LeftOutOfFigure
    from llm_aai.view import site as site_module

    drawn = site_module.plot_pass_rates

    def drawing_with_warnings(*args, **kwargs):
        warnings.warn("unclosed event loop <_UnixSelectorEventLoop>", ResourceWarning,
                      stacklevel=2)
        warnings.warn("model 'x' left out of the figure", LeftOutOfFigure, stacklevel=2)
        return drawn(*args, **kwargs)

    monkeypatch.setattr(site_module, "plot_pass_rates", drawing_with_warnings)
    with pytest.warns(ResourceWarning, match="unclosed event loop"):
        report = build_site([small_runs["heuristic"]], tmp_path / "site")
    assert report.problems == ["model 'x' left out of the figure"]
