"""The fetcher against a real HTTP server on 127.0.0.1 serving testbed files, and file:// URLs."""

import hashlib
import shutil
import socket
import time

import pytest
import requests

from llm_aai.arena.catalog import ARENAS_ENV, SOURCE_ENV, TESTBED_COMMIT, all_tasks, checksums
from llm_aai.arena.fetch import FetchError, SourceUnreachable, fetch_testbed

TASKS = [t.task_id for t in all_tasks()[::30]]  # 30 files across all levels


def fetch(server, dest, tasks=TASKS, **kw):
    return fetch_testbed(dest, source=server.url, task_ids=tasks, progress=False, **kw)


def verified(dest, name):
    return hashlib.sha256((dest / name).read_bytes()).hexdigest() == checksums()[name]


def leftovers(dest):
    """Anything in the folder that is not a testbed file under its real name."""
    return sorted(p.name for p in dest.iterdir() if p.name not in checksums())


def free_port():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fetch_downloads_verifies_and_then_skips(server, tmp_path):
    report = fetch(server, tmp_path)
    assert len(report.downloaded) == 30 and report.skipped == ()
    assert all(verified(tmp_path, f"{t}.yaml") for t in TASKS)
    assert leftovers(tmp_path) == []
    server.requests.clear()
    again = fetch(server, tmp_path)
    assert again.downloaded == () and len(again.skipped) == 30
    assert server.requests == []  # present and correct: not even asked for


def test_corrupted_file_is_reported_with_both_hashes_and_not_kept(server, tmp_path):
    bad = f"{TASKS[3]}.yaml"
    server.files[bad] = server.files[bad].replace(b"Agent", b"Agnet", 1)
    with pytest.raises(FetchError) as info:
        fetch(server, tmp_path)
    message = str(info.value)
    assert message.startswith(f"1 of 30 testbed files failed: {bad}: checksum mismatch")
    assert checksums()[bad] in message and hashlib.sha256(server.files[bad]).hexdigest() in message
    assert "\n" not in message  # one failure, one line
    assert not (tmp_path / bad).exists() and leftovers(tmp_path) == []
    assert len(list(tmp_path.glob("*.yaml"))) == 29  # the good files are kept


def test_corrupted_file_on_a_file_url_mirror_is_refused(testbed_dir, tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for task in TASKS[:3]:
        shutil.copy(testbed_dir / f"{task}.yaml", mirror)
    bad = mirror / f"{TASKS[1]}.yaml"
    bad.write_bytes(bad.read_bytes() + b"# tampered\n")
    dest = tmp_path / "cache"
    with pytest.raises(FetchError, match=f"{TASKS[1]}.yaml: checksum mismatch.*from file://"):
        fetch_testbed(dest, source=mirror.as_uri(), task_ids=TASKS[:3], progress=False)
    assert sorted(p.name for p in dest.iterdir()) == [f"{TASKS[0]}.yaml", f"{TASKS[2]}.yaml"]


def test_a_file_cut_off_once_is_fetched_again(server, tmp_path):
    name = f"{TASKS[5]}.yaml"
    server.truncate[name] = 1
    report = fetch(server, tmp_path)
    assert name in report.downloaded and verified(tmp_path, name)
    assert [n for n, _ in server.requests].count(name) == 2


def test_an_interrupted_fetch_resumes_with_the_files_still_missing(server, tmp_path):
    name = f"{TASKS[7]}.yaml"
    server.truncate[name] = 10  # cut off on every try
    with pytest.raises(FetchError, match=f"{name}: download interrupted .*run the command again"):
        fetch(server, tmp_path)
    assert not (tmp_path / name).exists() and leftovers(tmp_path) == []
    assert len(list(tmp_path.glob("*.yaml"))) == 29
    server.truncate[name] = 0
    server.requests.clear()
    report = fetch(server, tmp_path)
    assert report.downloaded == (name,) and len(report.skipped) == 29
    assert [n for n, _ in server.requests] == [name]  # only what was missing
    assert verified(tmp_path, name)


def test_corrupted_cache_entry_is_replaced(server, tmp_path):
    first = f"{TASKS[0]}.yaml"
    (tmp_path / first).write_text("garbage from an old run")
    report = fetch(server, tmp_path, tasks=TASKS[:2])
    assert set(report.downloaded) == {first, f"{TASKS[1]}.yaml"}
    assert verified(tmp_path, first)


def test_missing_file_on_the_mirror_is_named(server, tmp_path):
    del server.files[f"{TASKS[2]}.yaml"]
    with pytest.raises(FetchError, match=f"{TASKS[2]}.yaml: HTTP 404"):
        fetch(server, tmp_path, tasks=TASKS[:3])


def test_unknown_task_id_is_named(server, tmp_path):
    with pytest.raises(FetchError, match="not in the testbed: 11-01-01.yaml"):
        fetch(server, tmp_path, tasks=["11-01-01"])


def test_offline_message_is_one_line_naming_the_mirror_and_offline_copies(tmp_path):
    port = free_port()
    with pytest.raises(SourceUnreachable) as info:
        fetch_testbed(tmp_path, source=f"http://127.0.0.1:{port}", task_ids=TASKS[:2],
                      progress=False, timeout=5)
    message = str(info.value)
    assert message.startswith(f"cannot reach http://127.0.0.1:{port}/")
    assert "Connection refused" in message and "\n" not in message
    assert SOURCE_ENV in message and "--arenas-dir" in message and ARENAS_ENV in message
    assert list(tmp_path.iterdir()) == []


def test_default_destination_is_the_user_cache(server, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    report = fetch_testbed(source=server.url, task_ids=TASKS[:1], progress=False)
    assert report.dest == tmp_path / "llm-aai" / "testbed" / TESTBED_COMMIT
    assert verified(report.dest, f"{TASKS[0]}.yaml")


def test_default_source_is_the_mirror_named_in_the_environment(server, tmp_path, monkeypatch):
    monkeypatch.setenv(SOURCE_ENV, server.url)
    report = fetch_testbed(tmp_path, task_ids=TASKS[:2], progress=False)
    assert len(report.downloaded) == 2
    assert sorted(n for n, _ in server.requests) == sorted(f"{t}.yaml" for t in TASKS[:2])


def test_file_url_mirror_works(testbed_dir, tmp_path):
    report = fetch_testbed(tmp_path, source=testbed_dir.as_uri(), task_ids=TASKS[:3],
                           progress=False)
    assert len(report.downloaded) == 3 and all(verified(tmp_path, f"{t}.yaml") for t in TASKS[:3])


def test_file_url_mirror_lacking_a_file_names_it(tmp_path):
    (tmp_path / "mirror").mkdir()
    with pytest.raises(FetchError, match=f"{TASKS[0]}.yaml: No such file"):
        fetch_testbed(tmp_path / "cache", source=(tmp_path / "mirror").as_uri(),
                      task_ids=TASKS[:1], progress=False)


def _counting_gets(monkeypatch):
    """Record every URL the fetcher asks for."""
    opened, real = [], requests.get

    def get(url, *args, **kwargs):
        opened.append(url)
        return real(url, *args, **kwargs)

    monkeypatch.setattr(requests, "get", get)
    return opened


def test_unreachable_source_stops_at_the_first_failure(tmp_path, monkeypatch):
    port = free_port()
    opened = _counting_gets(monkeypatch)
    start = time.monotonic()
    with pytest.raises(SourceUnreachable, match=f"cannot reach http://127.0.0.1:{port}/"):
        fetch_testbed(tmp_path, source=f"http://127.0.0.1:{port}", progress=False,
                      timeout=1, workers=1)  # all 900 files
    assert len(opened) == 1 and time.monotonic() - start < 10  # no retries, no waiting
    opened.clear()
    with pytest.raises(SourceUnreachable):
        fetch_testbed(tmp_path, source=f"http://127.0.0.1:{port}", progress=False, timeout=1)
    assert 1 <= len(opened) <= 8  # at most the downloads already in flight


def test_silent_server_times_out_once(tmp_path, monkeypatch):
    opened = _counting_gets(monkeypatch)
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        with pytest.raises(SourceUnreachable, match=f"cannot reach {url}/.*timed out"):
            fetch_testbed(tmp_path, source=url, progress=False, timeout=0.5, workers=1)
    assert len(opened) == 1 and time.monotonic() - start < 5


def test_a_folder_that_cannot_be_made_is_one_line(testbed_dir, tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(FetchError, match=f"cannot create the testbed folder {tmp_path}/file/x"):
        fetch_testbed(tmp_path / "file" / "x", source=testbed_dir.as_uri(), task_ids=TASKS[:1],
                      progress=False)
