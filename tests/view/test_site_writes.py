"""A shared run folder cannot make the viewer write (or copy from) anywhere but the site.

Every test builds a site from a copy of a real run that was tampered with as a hostile lab
could: symlinks inside an episode, frame paths that climb, absolute frame paths, a symlinked
episode folder, odd names; or from a site folder already holding a symlink that leads out.
Beside the site lies a file that must keep its content, and nothing new may appear outside.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_aai.replay.episode import ReplayInputError
from llm_aai.view import build_site
from llm_aai.view.files import SiteWriteError

from .test_site import broken_links

EPISODE = "01-04-03_t1"


@pytest.fixture
def world(small_runs, tmp_path):
    """``(run, site, victim)``: a copy of the LLM run, where its site goes, a file beside it."""
    run = tmp_path / "runs" / "llm"
    shutil.copytree(small_runs["llm"], run)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    return run, tmp_path / "site", victim


def _outside(tmp_path: Path, site: Path) -> set[Path]:
    """Every path under ``tmp_path`` but the site's and the runs'."""
    return {p for p in tmp_path.rglob("*")
            if not p.is_relative_to(site) and not p.is_relative_to(tmp_path / "runs")}


def _set_first_frame(run: Path, name: str) -> str:
    """Point the first frame the episode sent at ``name``; returns the path it had."""
    turns = run / "episodes" / EPISODE / "turns.jsonl"
    records = [json.loads(line) for line in turns.read_text().splitlines()]
    first = next(r for r in records if r["sent_images"])
    old, first["sent_images"][0] = first["sent_images"][0], name
    turns.write_text("".join(json.dumps(r) + "\n" for r in records))
    return old


def test_a_frame_climbing_out_through_a_symlinked_folder_is_not_written_out(world, tmp_path):
    """The audit's case: ``link`` leads deep into the episode, so the frame's source stays
    inside it, while the same path climbs out of the site on the way to its copy."""
    run, site, victim = world
    episode = run / "episodes" / EPISODE
    deep = episode / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (episode / "link").symlink_to(deep, target_is_directory=True)
    (episode / "victim.txt").write_text("pwned by a shared run")
    climb = "link/" + "../" * 5 + "victim.txt"  # from site/data/llm/EPISODE/link: tmp_path
    assert (episode / climb).resolve() == (episode / "victim.txt").resolve()
    _set_first_frame(run, climb)
    before = _outside(tmp_path, site)
    report = build_site([run], site)
    assert victim.read_text() == "precious"
    assert _outside(tmp_path, site) == before
    assert any(f"image {climb!r}: frame path {climb!r} is not a relative path inside the "
               "episode folder" in line and line.endswith("; not copied")
               for line in report.problems), report.problems


@pytest.mark.parametrize("name", [
    "frames/x\0.jpg", "../../../../victim.txt", "frames/../../../../../victim.txt",
    "frames/./../x.jpg", "frames//x.jpg", "frames\\..\\..\\victim.txt",
])
def test_a_frame_path_with_dot_parts_is_refused(world, tmp_path, name):
    run, site, victim = world
    before = _outside(tmp_path, site)
    build_site([run], site)  # the unchanged run first: its frames are copied
    _set_first_frame(run, name)
    report = build_site([run], site)
    assert victim.read_text() == "precious" and _outside(tmp_path, site) == before
    assert any(f"image {name!r}: " in line and line.endswith("; not copied")
               for line in report.problems), report.problems


@pytest.mark.parametrize("name", [7, None, ["frames/x.jpg"], {"path": "x"}])
def test_a_frame_path_that_is_no_string_is_an_error_naming_the_log_and_line(world, name):
    run, site, _ = world
    _set_first_frame(run, name)
    with pytest.raises(ReplayInputError, match=r"turns\.jsonl:\d+: sent_images must be a list"):
        build_site([run], site)


def test_an_absolute_frame_path_is_neither_read_nor_written(world, tmp_path):
    run, site, victim = world
    secret = tmp_path / "secret.jpg"
    secret.write_bytes(b"secret frame")
    _set_first_frame(run, str(secret))
    before = _outside(tmp_path, site)
    report = build_site([run], site)
    assert _outside(tmp_path, site) == before and secret.read_bytes() == b"secret frame"
    assert not any(p.read_bytes() == b"secret frame" for p in site.rglob("*") if p.is_file())
    assert any(f"image {str(secret)!r}: frame path" in line and "is not a relative path" in line
               for line in report.problems)


def test_a_symlinked_frame_file_leading_out_is_not_copied(world, tmp_path):
    run, site, victim = world
    frame = run / "episodes" / EPISODE / _set_first_frame(run, "frames/leak.jpg")
    (frame.parent / "leak.jpg").symlink_to(victim)
    report = build_site([run], site)
    assert not any(p.read_bytes() == b"precious" for p in site.rglob("*") if p.is_file())
    assert any("image 'frames/leak.jpg': frame 'frames/leak.jpg' leads outside the episode "
               "folder" in line for line in report.problems)


def test_a_symlinked_episode_folder_is_drawn_but_its_frames_stay_where_they_are(world,
                                                                                tmp_path):
    """The folder's frames lie outside the run named, so they are not copied into the site."""
    run, site, victim = world
    elsewhere = tmp_path / "elsewhere"
    shutil.move(run / "episodes" / EPISODE, elsewhere)
    (run / "episodes" / EPISODE).symlink_to(elsewhere, target_is_directory=True)
    before = _outside(tmp_path, site)
    report = build_site([run], site)
    assert report.episodes == 1
    assert _outside(tmp_path, site) == before
    assert not (site / "data" / "llm" / EPISODE).exists()
    assert any("lies outside the run directory; not copied" in line
               for line in report.problems)


@pytest.mark.parametrize("planted", ["index.html", "assets", "assets/site.css", "data",
                                     "episode", "task/01-04-03.html", "assets/pass-rates.svg"])
def test_a_symlink_already_in_the_site_folder_is_not_written_through(world, tmp_path,
                                                                     planted):
    run, site, victim = world
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = site / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim if "." in planted else target)
    with pytest.raises(SiteWriteError, match=rf"{planted}.*: resolves to .*not inside the site"):
        build_site([run], site)
    assert victim.read_text() == "precious" and list(target.iterdir()) == []


def test_odd_names_of_runs_episodes_and_frames_stay_inside_and_link(world, tmp_path):
    run, site, victim = world
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["run_id"] = "../ run ü #?%\\\n.."
    (run / "manifest.json").write_text(json.dumps(manifest))
    frame = run / "episodes" / EPISODE / _set_first_frame(run, "frames/a b#?%ü&.jpg")
    shutil.copyfile(frame, frame.parent / "a b#?%ü&.jpg")
    odd = run / "episodes" / "01-04-03_t1 ..\\ ü#"
    shutil.move(run / "episodes" / EPISODE, odd)
    before = _outside(tmp_path, site)
    report = build_site([run], site)
    assert report.episodes == 1 and report.problems == []
    assert _outside(tmp_path, site) == before
    assert broken_links(site) == []
    copied = list(site.rglob("a b#?%ü&.jpg"))
    assert [c.read_bytes() for c in copied] == [(odd / "frames/a b#?%ü&.jpg").read_bytes()]
