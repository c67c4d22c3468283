"""The fetcher against a real HTTP server on 127.0.0.1 serving testbed files."""

import hashlib
import socket
import time
import urllib.request

import pytest

from llm_aai.arena.catalog import ARENAS_ENV, TESTBED_COMMIT, all_tasks, checksums
from llm_aai.arena.fetch import FetchError, SourceUnreachable, fetch_testbed

TASKS = [t.task_id for t in all_tasks()[::30]]  # 30 files across all levels


def fetch(server, dest, tasks=TASKS, **kw):
    return fetch_testbed(dest, source=server.url, task_ids=tasks, progress=False, **kw)


def verified(dest, name):
    return hashlib.sha256((dest / name).read_bytes()).hexdigest() == checksums()[name]


def test_fetch_downloads_verifies_and_then_skips(server, tmp_path):
    report = fetch(server, tmp_path)
    assert len(report.downloaded) == 30 and report.skipped == ()
    assert all(verified(tmp_path, f"{t}.yaml") for t in TASKS)
    assert list(tmp_path.glob("*.part")) == []
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
    assert "1 of 30 testbed files failed" in message
    assert bad in message and checksums()[bad] in message
    assert hashlib.sha256(server.files[bad]).hexdigest() in message
    assert not (tmp_path / bad).exists() and not (tmp_path / f"{bad}.part").exists()
    assert len(list(tmp_path.glob("*.yaml"))) == 29  # the good files are kept


def test_interrupted_download_is_resumed_with_a_range_request(server, tmp_path):
    name = f"{TASKS[5]}.yaml"
    server.truncate[name] = 1
    report = fetch(server, tmp_path)
    assert name in report.downloaded and verified(tmp_path, name)
    ranges = [r for n, r in server.requests if n == name]
    assert ranges[0] is None and ranges[1].startswith("bytes=") and ranges[1] != "bytes=0-"


def test_repeated_interruptions_fail_cleanly_and_the_next_run_resumes(server, tmp_path):
    name = f"{TASKS[7]}.yaml"
    server.truncate[name] = 10
    with pytest.raises(FetchError, match=f"{name}: download interrupted after"):
        fetch(server, tmp_path, tasks=[TASKS[7]])
    assert not (tmp_path / name).exists()
    part = tmp_path / f"{name}.part"
    assert 0 < part.stat().st_size < len(server.files[name])
    server.truncate[name] = 0
    report = fetch(server, tmp_path, tasks=[TASKS[7]])
    assert report.downloaded == (name,) and verified(tmp_path, name) and not part.exists()


def test_stale_part_and_corrupted_cache_entry_are_replaced(server, tmp_path):
    first, second = f"{TASKS[0]}.yaml", f"{TASKS[1]}.yaml"
    (tmp_path / first).write_text("garbage from an old run")
    (tmp_path / f"{second}.part").write_bytes(b"x" * 40)  # not a prefix of the real file
    report = fetch(server, tmp_path, tasks=TASKS[:2])
    assert set(report.downloaded) == {first, second}
    assert verified(tmp_path, first) and verified(tmp_path, second)


def test_missing_file_on_the_mirror_is_named(server, tmp_path):
    del server.files[f"{TASKS[2]}.yaml"]
    with pytest.raises(FetchError, match=f"{TASKS[2]}.yaml: HTTP 404"):
        fetch(server, tmp_path, tasks=TASKS[:3])


def test_offline_message_explains_local_copies(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FetchError) as info:
        fetch_testbed(tmp_path, source=f"http://127.0.0.1:{port}", task_ids=TASKS[:2],
                      progress=False, timeout=5)
    message = str(info.value)
    assert "cannot reach" in message and "--arenas-dir" in message and ARENAS_ENV in message
    assert list(tmp_path.iterdir()) == []


def test_default_destination_is_the_user_cache(server, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    report = fetch_testbed(source=server.url, task_ids=TASKS[:1], progress=False)
    assert report.dest == tmp_path / "llm-aai" / "testbed" / TESTBED_COMMIT
    assert verified(report.dest, f"{TASKS[0]}.yaml")


def test_file_url_mirror_works(testbed_dir, tmp_path):
    report = fetch_testbed(tmp_path, source=testbed_dir.as_uri(), task_ids=TASKS[:3],
                           progress=False)
    assert len(report.downloaded) == 3


def _counting_urlopen(monkeypatch):
    """Record every URL the fetcher opens."""
    opened, real = [], urllib.request.urlopen

    def urlopen(request, *args, **kwargs):
        opened.append(request.full_url)
        return real(request, *args, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return opened


def test_unreachable_source_stops_at_the_first_failure(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    opened = _counting_urlopen(monkeypatch)
    start = time.monotonic()
    with pytest.raises(SourceUnreachable, match=f"cannot reach http://127.0.0.1:{port}/"):
        fetch_testbed(tmp_path, source=f"http://127.0.0.1:{port}", progress=False,
                      timeout=1, workers=1)  # all 900 files
    assert len(opened) == 1 and time.monotonic() - start < 10
    opened.clear()
    with pytest.raises(SourceUnreachable):
        fetch_testbed(tmp_path, source=f"http://127.0.0.1:{port}", progress=False, timeout=1)
    assert 1 <= len(opened) <= 8  # at most the downloads already in flight


def test_silent_server_times_out_once(tmp_path, monkeypatch):
    opened = _counting_urlopen(monkeypatch)
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        with pytest.raises(SourceUnreachable, match=f"cannot reach {url}/.*timed out"):
            fetch_testbed(tmp_path, source=url, progress=False, timeout=0.5, workers=1)
    assert len(opened) == 1 and time.monotonic() - start < 5
