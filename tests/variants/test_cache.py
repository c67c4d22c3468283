"""``run --variants K --variant-seed S``: variants made on the fly, cached, and played."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from llm_aai.arena.catalog import select_tasks
from llm_aai.cli.run import main as run
from llm_aai.settings import read_settings
from llm_aai.variants.cache import cached_variants, default_cache_root
from llm_aai.variants.index import INDEX_FILE, read_variants

TASK = "01-05-01"


@pytest.fixture
def cache_home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return default_cache_root()


def entry_files(root: Path) -> dict[str, float]:
    """Every cached task entry's files and their modification times."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns
            for p in sorted((root / "tasks").rglob("*")) if p.is_file()}


def flags(testbed_dir: Path, runs: Path, run_id: str, *extra: str) -> list[str]:
    return ["--full-testbed", "--tasks", TASK, "--arenas-dir", str(testbed_dir), "--out",
            str(runs), "--run-id", run_id, "--no-progress", *extra]


@pytest.mark.slow
def test_variants_are_made_once_then_reused_in_another_mode(cache_home, testbed_dir, tmp_path,
                                                            capsys):
    runs = tmp_path / "runs"
    assert run(["--model", "heuristic", "--variants", "2", "--variant-seed", "4",
                *flags(testbed_dir, runs, "images")]) == 0
    err = capsys.readouterr().err
    assert f"variants: {TASK}: 2/2 kept" in err
    assert "1 task(s) made now, 0 from the cache" in err
    cached = entry_files(cache_home)
    assert any(name.endswith(f"{TASK}-v2.yaml") for name in cached)
    assert not list((cache_home / "batches").iterdir())  # the batch was split and removed

    # the text probe, on the same K and seed: nothing made, the cache untouched
    assert run(["--model", "heuristic", "--observation", "text", "--variants", "2",
                "--variant-seed", "4", *flags(testbed_dir, runs, "text")]) == 0
    err = capsys.readouterr().err
    assert "0 task(s) made now, 1 from the cache" in err and "kept" not in err
    assert entry_files(cache_home) == cached

    for run_id in ("images", "text"):
        summary = pd.read_csv(runs / run_id / "summary.csv")
        assert sorted(summary["task_id"]) == [f"{TASK}-v1", f"{TASK}-v2"]
        assert set(summary["parent_task"]) == {TASK}
        settings = read_settings(runs / run_id)
        assert settings.variants == {f"{TASK}-v1": TASK, f"{TASK}-v2": TASK}
        assert settings.config.variants.is_relative_to(cache_home / "sets")
        assert settings.config.variant_seed == 4
        assert settings.config.observation == ("text" if run_id == "text" else "image")
    played = read_variants(settings.config.variants)
    assert {v.parent for v in played} == {TASK}

    # another seed is another cache entry, made now
    assert run(["--model", "heuristic", "--variants", "2", "--variant-seed", "5",
                *flags(testbed_dir, runs, "seed5")]) == 0
    assert "1 task(s) made now, 0 from the cache" in capsys.readouterr().err
    assert len({name.split("/")[1] for name in entry_files(cache_home)}) == 2


def test_the_cache_key_follows_the_task_file(cache_home, testbed_dir, tmp_path):
    tasks = select_tasks(tasks=TASK, full=True)
    first = cached_variants(tasks, 1, 0, arenas_dir=testbed_dir)
    assert first.made == (TASK,) and first.reused == ()
    again = cached_variants(tasks, 1, 0, arenas_dir=testbed_dir)
    assert again.made == () and again.reused == (TASK,) and again.folder == first.folder
    edited = tmp_path / "arenas"
    edited.mkdir()
    (edited / f"{TASK}.yaml").write_text((testbed_dir / f"{TASK}.yaml").read_text() + "\n")
    changed = cached_variants(tasks, 1, 0, arenas_dir=edited)
    assert changed.made == (TASK,) and changed.folder != first.folder
    assert (changed.folder / INDEX_FILE).is_file()


@pytest.mark.parametrize("argv, message", [
    (["--variant-seed", "3"], "--variant-seed is the seed of --variants K"),
    (["--variants", "2", "--dry-run"], "--dry-run writes nothing"),
])
def test_flags_that_do_not_go_together_are_refused(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        run(["--model", "heuristic", *argv, "--out", str(tmp_path / "runs")])
    assert exited.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("argv, message", [
    (["--variants", "0"], "--variants 0: --count 0: give 1 to 20"),
    (["--variants", "2", "--full-testbed", "--tasks", "01-20-01"],
     "layout cannot be transformed"),
])
def test_variants_that_cannot_be_made_are_refused(argv, message, cache_home, testbed_dir,
                                                  tmp_path, capsys):
    assert run(["--model", "heuristic", *argv, "--arenas-dir", str(testbed_dir), "--out",
                str(tmp_path / "runs"), "--no-progress"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
