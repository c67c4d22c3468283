"""Download the pinned Animal-AI testbed into the user cache, verified and resumable.

Every file is checked against the sha256 shipped in ``llm_aai/data/competition.sha256``, so a
mirror (``source``) can be anything that serves the same bytes, including a ``file://`` URL.
Files are written as ``<name>.part`` and renamed into place only once their checksum matches
(``os.replace`` is atomic), so the cache never holds a partial or corrupted arena under its
real name. An interrupted download keeps its ``.part`` file and is resumed with an HTTP
``Range`` request, on the next attempt or the next run; files already present and correct are
skipped. If the server gives no response at all (DNS failure, refused connection, timeout),
the first such failure stops the whole fetch: every other file would fail the same way, one
timeout after another.
"""

from __future__ import annotations

import http.client
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from llm_aai.arena.catalog import ARENAS_ENV, BASE_URL, cache_dir, checksums, select_tasks
from llm_aai.arena.checksum import file_sha256

ATTEMPTS = 3
"""Tries per file; each retry resumes from the bytes already received."""
_CHUNK = 64 * 1024


class FetchError(RuntimeError):
    """A download failed; the message names the file(s) and what to do."""


class SourceUnreachable(FetchError):
    """No connection to the source at all: the message names the URL and local alternatives."""


@dataclass(frozen=True)
class FetchReport:
    """What a fetch did."""

    dest: Path
    downloaded: tuple[str, ...]
    skipped: tuple[str, ...]


def _offline_help(url: str, reason: object) -> str:
    return (f"cannot reach {url} ({reason}). If this machine is offline, use a local copy of "
            f"the testbed (the configs/competition folder of {BASE_URL.split('/')[3]}/"
            f"animal-ai): pass --arenas-dir DIR or set {ARENAS_ENV}=DIR, or fetch from a "
            "mirror with --source URL.")


def _download_once(url: str, part: Path, timeout: float) -> None:
    """Append the rest of ``url`` to ``part``; raise on any failure (part kept)."""
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # we already hold every byte
            return
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except OSError as exc:  # no response at all (URLError included): DNS, refused, timeout
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        if request.type == "file":  # a local mirror lacking this one file, like a 404
            raise FetchError(f"{url}: {reason}") from None
        raise SourceUnreachable(_offline_help(url, reason)) from None
    with response:
        resumed = have and response.status == 206
        expected = response.headers.get("Content-Length")
        received = 0
        with part.open("ab" if resumed else "wb") as out:
            while block := response.read(_CHUNK):
                out.write(block)
                received += len(block)
        if expected is not None and received < int(expected):
            raise http.client.IncompleteRead(b"", int(expected) - received)


def _download(url: str, part: Path, timeout: float) -> None:
    """Download ``url`` into ``part``, resuming after interruptions, up to ``ATTEMPTS`` tries."""
    last_error: BaseException | None = None
    for _ in range(ATTEMPTS):
        try:
            _download_once(url, part, timeout)
            return
        except (http.client.HTTPException, OSError) as exc:  # cut off mid-body: resume
            last_error = exc
    size = part.stat().st_size if part.exists() else 0
    raise FetchError(f"{part.name.removesuffix('.part')}: download interrupted after {size} "
                     f"bytes ({last_error!r}); run fetch again to resume")


def _fetch_one(name: str, expected: str, dest: Path, source: str, timeout: float) -> bool:
    """Make ``dest/name`` a verified copy; return False if it was already there."""
    target = dest / name
    if target.is_file() and file_sha256(target) == expected:
        return False
    part = dest / f"{name}.part"
    url = f"{source.rstrip('/')}/{name}"
    resumed = part.exists()
    _download(url, part, timeout)
    actual = file_sha256(part)
    if actual != expected and resumed:  # a stale .part from an older run: start afresh once
        part.unlink()
        _download(url, part, timeout)
        actual = file_sha256(part)
    if actual != expected:
        part.unlink()
        raise FetchError(f"{name}: checksum mismatch, expected sha256 {expected}, got {actual} "
                         f"(from {url}); the file was discarded")
    os.replace(part, target)
    return True


def fetch_testbed(
    dest: str | Path | None = None,
    source: str = BASE_URL,
    task_ids: Iterable[str] | None = None,
    progress: bool = True,
    *,
    timeout: float = 30.0,
    workers: int = 8,
) -> FetchReport:
    """Download (or complete) the testbed into ``dest``, verifying every file.

    Args:
        dest: target folder; default the user cache (``catalog.cache_dir()``).
        source: base URL holding ``LL-TT-VV.yaml`` files; default the pinned GitHub commit.
        task_ids: only these tasks (ids as in the catalog); None for all 900.
        progress: show a tqdm progress bar on stderr.
        timeout: seconds per network operation.
        workers: parallel downloads.

    Returns:
        Which files were downloaded and which were already present and correct.

    Raises:
        FetchError: a file could not be downloaded or failed its checksum (all failures are
            listed; good files are kept).
        SourceUnreachable: the first connection to the source failed; the fetch stops there
            and the message explains how to use a local copy instead.

    """
    dest = Path(dest).expanduser() if dest is not None else cache_dir()
    dest.mkdir(parents=True, exist_ok=True)
    sums = checksums()
    if task_ids is None:
        names = sorted(sums)
    else:
        names = [t.filename for t in select_tasks(tasks=",".join(task_ids), full=True)]
    downloaded, skipped, failures = [], [], []
    unreachable = threading.Event()

    def fetch_one(name: str) -> bool | None:
        """``_fetch_one``, or None without trying once the source is known to be unreachable."""
        if unreachable.is_set():
            return None
        try:
            return _fetch_one(name, sums[name], dest, source, timeout)
        except SourceUnreachable:
            unreachable.set()
            raise

    bar = _progress_bar(len(names), progress)
    try:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            futures = {pool.submit(fetch_one, n): n for n in names}
            for future in as_completed(futures):
                name = futures[future]
                try:
                    fetched = future.result()
                except SourceUnreachable:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
                except FetchError as exc:
                    failures.append(str(exc))
                else:
                    if fetched is not None:
                        (downloaded if fetched else skipped).append(name)
                bar.update(1)
    finally:
        bar.close()
    if failures:
        summary = "\n".join(sorted(failures))
        raise FetchError(f"{len(failures)} of {len(names)} testbed files failed:\n{summary}")
    return FetchReport(dest, tuple(sorted(downloaded)), tuple(sorted(skipped)))


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm  # imported here: only fetching needs it

    return tqdm(total=total, unit="file", desc="testbed", disable=not enabled)
