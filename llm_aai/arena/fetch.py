"""Download the pinned Animal-AI testbed into the user cache, verified, on demand or on first use.

pooch does the downloading: each file is streamed to a temporary name in the cache folder
and moved into place only once its sha256 matches ``llm_aai/data/competition.sha256``, so
the cache never holds a partial or corrupted arena under its real name; a file already there
and correct is not even requested, so an interrupted fetch resumes where it stopped (the next
one asks only for the files still missing); a file cut off mid-body is tried again. Added
here, because pooch lacks them: ``file://`` mirrors, one progress bar for the whole testbed
(not one per file), parallel downloads, one-line errors, and stopping at the first failure to
connect at all (every other file would fail the same way, one timeout after another).

Where from: ``source``, else ``$LLM_AAI_TESTBED_SOURCE`` (a mirror: any URL that serves the
same bytes as ``<source>/LL-TT-VV.yaml``, ``file://`` included), else the testbed folder of
the official repository at the pinned commit.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from llm_aai.arena.checksum import pinned_checksums

TESTBED_REPO = "Kinds-of-Intelligence-CFI/animal-ai"
TESTBED_COMMIT = "ea382dbca75dc7a828ba5029d7e36c0900f9f460"
BASE_URL = (f"https://raw.githubusercontent.com/{TESTBED_REPO}/{TESTBED_COMMIT}"
            "/configs/competition")
"""The official source: the testbed folder of the Animal-AI repository at the pinned commit."""
SOURCE_ENV = "LLM_AAI_TESTBED_SOURCE"
"""Environment variable naming a mirror to download from instead (a URL, ``file://`` too)."""
ARENAS_ENV = "LLM_AAI_ARENAS"
"""Environment variable naming a folder of ``LL-TT-VV.yaml`` testbed files (no download)."""

ATTEMPTS = 3
"""Tries per file when a download is cut off or arrives damaged."""


class FetchError(RuntimeError):
    """A download failed; the message names the file(s) and what to do."""


class SourceUnreachable(FetchError):
    """No connection to the source at all: the message names the URL and the alternatives."""


@dataclass(frozen=True)
class FetchReport:
    """What a fetch did."""

    dest: Path
    downloaded: tuple[str, ...]
    skipped: tuple[str, ...]


def cache_dir() -> Path:
    """Where the pinned testbed is kept: the user cache folder, one sub-folder per commit.

    ``platformdirs`` picks the platform's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache`` on
    Linux, ``~/Library/Caches`` on macOS).
    """
    import platformdirs

    return platformdirs.user_cache_path("llm-aai") / "testbed" / TESTBED_COMMIT


def default_source() -> str:
    """The mirror named by ``$LLM_AAI_TESTBED_SOURCE``, else the official source."""
    return os.environ.get(SOURCE_ENV) or BASE_URL


def _offline_help(url: str, reason: str) -> str:
    return (f"cannot reach {url} ({reason}). Name a mirror with {SOURCE_ENV}=URL (http(s):// "
            "or file://), or use an offline copy of the testbed (the configs/competition "
            f"folder of {TESTBED_REPO} at commit {TESTBED_COMMIT[:7]}) with --arenas-dir DIR "
            f"or {ARENAS_ENV}=DIR.")


_REASONS = (r"\[Errno -?\d+\] [^'\")]+", r"[Rr]ead timed out", r"timed out")


def _short_reason(error: BaseException) -> str:
    """The telling part of a requests error (its text nests three libraries' messages)."""
    text = str(error)
    for pattern in _REASONS:
        if match := re.search(pattern, text):
            return match.group(0).strip()
    return type(error).__name__


class _Downloader:
    """pooch's HTTP downloader, plus ``file://`` mirrors and final connection failures.

    A failure to connect becomes :class:`SourceUnreachable` and an HTTP error status a
    :class:`FetchError`: pooch retries neither (it retries only what may pass next time).
    """

    def __init__(self, timeout: float):
        import pooch

        self._http = pooch.HTTPDownloader(timeout=timeout, progressbar=False)

    def __call__(self, url: str, output_file: str, pup: object, check_only: bool = False):
        if url.startswith("file:"):
            path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
            try:
                shutil.copyfile(path, output_file)
            except OSError as error:  # a local mirror lacking this one file, like a 404
                raise FetchError(f"{url}: {error.strerror}") from None
            return None
        import requests

        try:
            return self._http(url, output_file, pup, check_only=check_only)
        except requests.HTTPError as error:
            response = error.response
            raise FetchError(f"{url}: HTTP {response.status_code} {response.reason}") from None
        except (requests.ConnectionError, requests.Timeout) as error:
            raise SourceUnreachable(_offline_help(url, _short_reason(error))) from None


def _fetch_one(pup, name: str, downloader: _Downloader) -> bool:
    """Make ``name`` a verified file of the cache; return False if it was already there."""
    import requests

    actions: list[str] = []

    def record(path: str, action: str, _pup: object) -> str:
        actions.append(action)
        return path

    url = pup.get_url(name)
    try:
        pup.fetch(name, processor=record, downloader=downloader)
    except ValueError as error:  # pooch: the sha256 differs (after ATTEMPTS tries)
        got = re.search(r"but got ([0-9a-f]{64})", str(error))
        raise FetchError(f"{name}: checksum mismatch, expected sha256 {pup.registry[name]}, got "
                         f"{got.group(1) if got else '?'} (from {url}); the file was discarded: "
                         "this source does not serve the pinned testbed") from None
    except requests.RequestException as error:  # cut off mid-body, every try
        raise FetchError(f"{name}: download interrupted ({_short_reason(error)}, {ATTEMPTS} "
                         "tries); run the command again to fetch the files still missing"
                         ) from None
    except OSError as error:  # the cache folder cannot be written (full, read-only); after
        # requests' errors, which are OSErrors too
        raise FetchError(f"{name}: cannot write into {pup.abspath}: {error.strerror or error}"
                         ) from None
    return actions != ["fetch"]


def fetch_testbed(
    dest: str | Path | None = None,
    source: str | None = None,
    task_ids: Iterable[str] | None = None,
    progress: bool = True,
    *,
    timeout: float = 30.0,
    workers: int = 8,
) -> FetchReport:
    """Download (or complete) the testbed into ``dest``, verifying every file.

    Args:
        dest: target folder; default the user cache (:func:`cache_dir`).
        source: base URL holding ``LL-TT-VV.yaml`` files; default :func:`default_source`.
        task_ids: only these tasks (ids such as ``04-12-03``); None for all 900.
        progress: show a tqdm progress bar on stderr.
        timeout: seconds per network operation.
        workers: parallel downloads.

    Returns:
        Which files were downloaded and which were already present and correct.

    Raises:
        FetchError: a file could not be downloaded or failed its checksum (all failures are
            listed; good files are kept).
        SourceUnreachable: the first connection to the source failed; the fetch stops there
            and the message explains how to use a mirror or a local copy instead.

    """
    import pooch

    pooch.get_logger().setLevel(logging.WARNING)  # not one INFO line per file
    dest = Path(dest).expanduser() if dest is not None else cache_dir()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise FetchError(f"cannot create the testbed folder {dest}: {error.strerror or error}"
                         ) from None
    source = source or default_source()
    sums = pinned_checksums()
    names = sorted(sums) if task_ids is None else _file_names(task_ids, sums)
    pup = pooch.Pooch(path=dest, base_url=source.rstrip("/") + "/", registry=sums,
                      retry_if_failed=ATTEMPTS - 1)
    downloader = _Downloader(timeout)
    downloaded, skipped, failures = [], [], []
    unreachable = threading.Event()

    def fetch_one(name: str) -> bool | None:
        """``_fetch_one``, or None without trying once the source is known to be unreachable."""
        if unreachable.is_set():
            return None
        try:
            return _fetch_one(pup, name, downloader)
        except SourceUnreachable:
            unreachable.set()
            raise

    bar = _progress_bar(len(names), progress)
    try:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            futures = {pool.submit(fetch_one, n): n for n in names}
            for future in as_completed(futures):
                try:
                    fetched = future.result()
                except SourceUnreachable:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
                except FetchError as exc:
                    failures.append(str(exc))
                else:
                    if fetched is not None:
                        (downloaded if fetched else skipped).append(futures[future])
                bar.update(1)
    finally:
        bar.close()
    if failures:
        failures.sort()
        raise FetchError(f"{len(failures)} of {len(names)} testbed files failed: "
                         + "\n".join(failures))
    return FetchReport(dest, tuple(sorted(downloaded)), tuple(sorted(skipped)))


def _file_names(task_ids: Iterable[str], sums: dict[str, str]) -> list[str]:
    names = [f"{task_id.strip().removesuffix('.yaml')}.yaml" for task_id in task_ids]
    unknown = [name for name in names if name not in sums]
    if unknown:
        raise FetchError(f"not in the testbed: {', '.join(unknown)} (ids look like 04-12-03)")
    return names


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm  # imported here: only fetching needs it

    return tqdm(total=total, unit="file", desc="testbed", disable=not enabled)
