import hashlib

import pytest

from llm_aai.arena.catalog import (
    ARENAS_ENV,
    LEVEL_NAMES,
    SOURCE_ENV,
    TESTBED_COMMIT,
    ArenaNotFoundError,
    Task,
    TaskSelectionError,
    all_tasks,
    cache_dir,
    checksums,
    children_subset,
    resolve_arena_path,
    select_tasks,
    unity_passed_tasks,
    unity_records,
)


def test_catalog_has_900_tasks_and_a_40_task_subset_with_4_per_level():
    assert len(all_tasks()) == 900
    assert all_tasks()[0] == Task("01-01-01", 1, "Food Retrieval")
    subset = children_subset()
    assert len(subset) == 40
    assert {lvl: sum(t.level == lvl for t in subset) for lvl in LEVEL_NAMES} == dict.fromkeys(
        LEVEL_NAMES, 4)
    assert all(t.level_name == LEVEL_NAMES[t.level] for t in subset)
    assert set(subset) <= set(all_tasks())


def test_shipped_checksums_match_the_reference_testbed(testbed_dir):
    sums = checksums()
    assert len(sums) == 900
    for name, digest in sums.items():
        assert hashlib.sha256((testbed_dir / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize(("level", "tasks", "full", "count"), [
    (None, None, False, 40),
    (None, None, True, 900),
    ("1-10", None, False, 40),
    ("1,3,5", None, False, 12),
    ("2", None, True, 90),
    ("1-3, 7", None, True, 360),
    (None, "01-04-03,02-10-01", False, 2),
    (None, "01-01-01, 01-01-01.yaml", True, 1),
    ("1", "01-04-03,02-10-01", False, 1),
])
def test_select_tasks(level, tasks, full, count):
    chosen = select_tasks(level, tasks, full)
    assert len(chosen) == count
    assert chosen == sorted(chosen)


@pytest.mark.parametrize(("level", "tasks", "full", "message"), [
    ("0", None, False, "out of range: levels are 1 to 10"),
    ("1-11", None, False, "out of range"),
    ("5-2", None, False, "level range .5-2. is reversed: write 2-5"),
    ("one", None, False, "bad level 'one'"),
    ("1,,2", None, False, "bad level ''"),
    (None, "1-4-3", False, "bad task id '1-4-3'"),
    (None, "11-01-01", True, "11-01-01 is not in the testbed"),
    (None, "01-01-01", False, "not in the 40-task children subset; add --full-testbed"),
    ("2", "01-04-03", False, "no task matches"),
])
def test_select_tasks_errors_are_clear(level, tasks, full, message):
    with pytest.raises(TaskSelectionError, match=message.replace("(", r"\(")):
        select_tasks(level, tasks, full)


def test_cache_dir_honours_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "llm-aai" / "testbed" / TESTBED_COMMIT
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == tmp_path / ".cache" / "llm-aai" / "testbed" / TESTBED_COMMIT


def test_resolve_arena_path_precedence(monkeypatch, tmp_path, testbed_dir):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(ARENAS_ENV, raising=False)
    cached = cache_dir() / "01-01-01.yaml"
    cached.parent.mkdir(parents=True)
    cached.write_text("cached")
    assert resolve_arena_path("01-01-01") == cached
    monkeypatch.setenv(ARENAS_ENV, str(testbed_dir))
    assert resolve_arena_path("01-01-01") == testbed_dir / "01-01-01.yaml"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "01-01-01.yaml").write_text("mine")
    assert resolve_arena_path("01-01-01", arenas_dir=mine) == mine / "01-01-01.yaml"


def test_missing_arena_in_an_offline_copy_is_an_error_never_a_download(monkeypatch, tmp_path,
                                                                       full_server):
    monkeypatch.setenv(SOURCE_ENV, full_server.url)
    with pytest.raises(ArenaNotFoundError) as info:
        resolve_arena_path("04-12-03", arenas_dir=tmp_path / "nowhere")
    message = str(info.value)
    assert "04-12-03" in message and "folder from --arenas-dir" in message
    assert "python -m llm_aai.arenas fetch --dest DIR" in message
    monkeypatch.setenv(ARENAS_ENV, str(tmp_path))
    with pytest.raises(ArenaNotFoundError, match=f"folder from \\${ARENAS_ENV}"):
        resolve_arena_path("04-12-03")
    assert full_server.requests == [] and list(tmp_path.iterdir()) == []
    with pytest.raises(TaskSelectionError):
        resolve_arena_path("4-12-3")


def test_first_use_fills_the_cache_from_the_mirror_once(monkeypatch, tmp_path, full_server,
                                                        capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(ARENAS_ENV, raising=False)
    monkeypatch.setenv(SOURCE_ENV, full_server.url)
    path = resolve_arena_path("04-12-03")
    assert path == cache_dir() / "04-12-03.yaml" and path.read_bytes() == (
        full_server.files["04-12-03.yaml"])
    assert sorted(p.name for p in cache_dir().iterdir()) == sorted(checksums())
    err = capsys.readouterr().err
    assert f"arena 04-12-03 is not in the testbed cache {cache_dir()}" in err
    assert f"downloading the pinned testbed once (900 files, 1.4 MB, checksummed) from " \
           f"{full_server.url}" in err
    assert "900/900" in err  # the progress bar
    full_server.requests.clear()
    assert resolve_arena_path("10-30-03") == cache_dir() / "10-30-03.yaml"
    assert full_server.requests == [] and capsys.readouterr().err == ""


def test_first_use_from_a_file_url_mirror(monkeypatch, tmp_path, testbed_dir):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(ARENAS_ENV, raising=False)
    monkeypatch.setenv(SOURCE_ENV, testbed_dir.as_uri())
    assert resolve_arena_path("01-01-01").read_bytes() == (
        testbed_dir / "01-01-01.yaml").read_bytes()


def test_first_use_offline_is_one_line_saying_where_else_to_look(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(ARENAS_ENV, raising=False)  # the conftest's unreachable mirror stays
    with pytest.raises(ArenaNotFoundError) as info:
        resolve_arena_path("04-12-03")
    message = str(info.value)
    assert message.startswith(f"arena 04-12-03 is not in the testbed cache {cache_dir()} and "
                              "downloading it failed: cannot reach http://127.0.0.1:9/")
    assert "\n" not in message
    assert f"{SOURCE_ENV}=URL" in message and "--arenas-dir DIR" in message
    assert f"{ARENAS_ENV}=DIR" in message


def test_the_unity_passed_tasks_are_the_736_an_entrant_passed():
    passed = unity_passed_tasks()
    records = unity_records()
    assert len(passed) == 736 and list(passed) == sorted(passed)
    assert all(records[t.task_id].passed_any > 0 for t in passed)
    assert sum(t.level == 10 for t in passed) == 24  # docs/testbed-audit.md, level 10
    assert not any(records[t.task_id].passed_any for t in set(all_tasks()) - set(passed))
