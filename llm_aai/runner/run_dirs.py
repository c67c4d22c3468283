"""Where a run lives: its folder checked, made, found again, and locked while it is written.

A run folder appears whole, with its manifest, or not at all; a name taken in the same second
gets a suffix; a folder another process holds, or one that cannot be written, is a
``RunError`` that names it. ``start_run``, ``open_run`` and ``resume_run`` share these, so each
treats a run folder alike.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from llm_aai.logs.schema import RunManifest, SchemaError
from llm_aai.logs.store import LOCK, RunStore, read_manifest
from llm_aai.runner.errors import RunError
from llm_aai.runner.routing import ROUTING, KeyUnusable, routing_of, vouch
from llm_aai.settings import RunConfig, settings_of

MAX_RUN_ID_BYTES = 200
"""The longest run id, in UTF-8 bytes: a folder name holds 255 bytes on Linux and macOS, and a
run's folder is first made as ``.<id>.<8 hex>.creating`` (19 more) and may take a ``-N``
suffix, so an id near 255 would pass the check and fail when the run is created."""


def check_run_location(out: Path, run_id: str | None) -> None:
    """Refuse a run id that is not one folder name, and an ``out`` no run can be written in.

    Checked before anything else, so that nothing is written (not even ``out`` itself) for a
    run that could not be stored: ``--run-id ../x`` would land outside ``out``, and an ``out``
    below a file or in a read-only folder would fail only after the checks had run.
    """
    if run_id is not None and (run_id in ("", ".", "..") or "/" in run_id or "\\" in run_id
                               or "\0" in run_id):
        raise RunError(f"run id {run_id!r} must be a single folder name (no '/', not '..')")
    if run_id is not None and any(unicodedata.category(char)[0] == "C" for char in run_id):
        raise RunError(f"run id {run_id!r} holds a control character (a newline, an escape "
                       "sequence...): the folder's name would be printed to the terminal")
    if run_id is not None and (size := len(os.fsencode(run_id))) > MAX_RUN_ID_BYTES:
        raise RunError(f"run id {_shortened(run_id)} (--run-id) is {size} bytes long in UTF-8 "
                       f"({len(run_id)} characters); at most {MAX_RUN_ID_BYTES} bytes fit in "
                       "the name of a run's folder")
    existing = out
    while not existing.exists():
        if existing.is_symlink() or existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise RunError(f"cannot write runs in {out}: {existing} is a file, not a folder")
    if existing.exists() and not os.access(existing, os.W_OK | os.X_OK):
        raise RunError(f"cannot write runs in {out}: {existing} is not writable")


def check_run_dir(run_dir: Path) -> None:
    """Refuse a given run folder no run can be written in, as ``check_run_location`` does.

    A file in its place, or one above it, otherwise fails as the folder is made, with what
    ``mkdir`` says ('File exists' for a folder below a file), which names no culprit.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise RunError(f"cannot write the run in {run_dir}: it is a file, not a folder")
    check_run_location(run_dir.parent, None)


def _shortened(run_id: str) -> str:
    """The id quoted, cut to its first 40 characters: the error stays one readable line."""
    return repr(run_id) if len(run_id) <= 40 else repr(run_id[:40]) + "..."


def unused_run_dir(out: Path, run_id: str) -> Path:
    """``out/run_id``, or ``out/run_id-2``, ``-3``... when a run started in the same second."""
    candidate, n = out / run_id, 1
    while candidate.exists() and (not candidate.is_dir() or holds_a_run(candidate)):
        n += 1
        candidate = out / f"{run_id}-{n}"
    return candidate


def holds_a_run(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds anything but the ``.lock`` an interrupted start once left."""
    return run_dir.is_dir() and any(path.name != LOCK for path in run_dir.iterdir())


def create_run(run_dir: Path, manifest: RunManifest) -> None:
    """Make the run's folder with its manifest in one step: a folder without one is never seen.

    The manifest is written in a hidden folder beside it, which is then renamed: an
    interruption (Ctrl-C, SIGTERM, kill -9) while the manifest is made (``git`` runs) or
    written leaves no run folder, and the same command starts the run again. An empty folder,
    or one holding only the ``.lock`` of a start interrupted by an earlier version, is taken.
    A run whose settings send data somewhere or start a program gets this user's mark
    (``routing.vouch``), so that resuming it here takes them from its manifest; a mark that
    cannot be made is said, and the run is made without it.
    """
    staging = run_dir.with_name(f".{run_dir.name}.{secrets.token_hex(4)}.creating")
    unvouched = None
    try:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        staging.mkdir()  # as any folder (0777 less the umask): colleagues read runs
        RunStore(staging).write_manifest(manifest)
        config = settings_of(manifest).config
        try:
            vouch(staging, manifest, config)
        except KeyUnusable as error:
            unvouched = (error, routing_of(config))
        if run_dir.is_dir() and not holds_a_run(run_dir):
            (run_dir / LOCK).unlink(missing_ok=True)
        os.rename(staging, run_dir)  # onto an empty folder too; refused if it holds a run
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        if holds_a_run(run_dir):  # another start won the race
            raise RunError(f"{run_dir} already exists; use --resume {run_dir} to continue "
                           "it") from error
        raise RunError(f"cannot create the run directory {run_dir}: "
                       f"{error.strerror or error}") from error
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if unvouched is not None:
        error, routing = unvouched
        flags = " ".join(f"{ROUTING[dotted][1]} {value}" for dotted, value in routing.items())
        print(f"warning: {error}; {run_dir} was made without the mark that vouches for its "
              f"routing settings, so resuming it will need {flags} given again",
              file=sys.stderr)


def read_run_manifest(run_dir: Path) -> RunManifest:
    """The manifest of the run in ``run_dir``, or a ``RunError`` saying why there is none.

    A folder holding only the ``.lock`` of an interrupted start is told apart: its run
    never began, and the same command starts it.
    """
    try:
        return read_manifest(run_dir)
    except (FileNotFoundError, SchemaError) as error:
        if run_dir.is_dir() and not holds_a_run(run_dir) and (run_dir / LOCK).exists():
            raise RunError(f"{run_dir} holds only the .lock of a start interrupted before its "
                           "manifest was written: no episode was played; start the run again "
                           "with the same command") from error
        raise RunError(str(error)) from error


def config_of(manifest: RunManifest, run_dir: Path) -> RunConfig:
    """The config ``manifest`` records; one the settings cannot read names the file."""
    try:
        return settings_of(manifest).config
    except SchemaError as error:
        raise RunError(f"{run_dir / 'manifest.json'}: {error}") from error


def take_lock(store: RunStore) -> FileLock:
    """Take the run's lock, for its holder to release; another holder is a ``RunError``."""
    try:
        lock = store.lock()
        lock.acquire()
    except Timeout as error:  # an OSError too: first
        reason = _why_not_creatable(Path(error.lock_file))
        if reason is not None:  # filelock retries a lock file it cannot create (/proc/self)
            raise RunError(f"cannot lock the run {store.root}: {error.lock_file} cannot be "
                           f"created: {reason}") from error
        raise RunError(f"another process is running {store.root} (it holds {error.lock_file}); "
                       "wait for it to finish, or stop it first") from error
    except OSError as error:  # a read-only run folder, a .lock that is a folder...
        where = f"{error.filename}: " if error.filename else ""
        raise RunError(f"cannot lock the run {store.root}: {where}"
                       f"{error.strerror or error}") from error
    return lock


def _why_not_creatable(lock_file: Path) -> str | None:
    """Why ``lock_file`` cannot be made, or None when it exists (or could be made: a race).

    filelock takes a lock file it cannot create in a folder that exists for one a holder
    removed meanwhile, and waits for it until its timeout: without this, a folder that takes
    no new files (``/proc/self``) would read as a run another process holds.
    """
    if os.path.lexists(lock_file):
        return None
    try:
        descriptor = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return None
    except OSError as error:
        return error.strerror or str(error)
    os.close(descriptor)
    lock_file.unlink(missing_ok=True)  # made only to ask; the next try takes it
    return None


@contextmanager
def locked(store: RunStore) -> Iterator[RunStore]:
    """Hold the run's lock while writing it; another holder is a ``RunError``."""
    lock = take_lock(store)
    try:
        yield store
    finally:
        lock.release()


@contextmanager
def storage_errors(run_dir: Path) -> Iterator[None]:
    """Turn a file the run cannot write (a full disk, a read-only folder) into a RunError.

    The message names the file and the way to go on. Every write of a sealed episode is
    atomic, so what was sealed before stays whole; the episodes in flight are played again
    on resume.
    """
    try:
        yield
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        raise RunError(
            f"cannot write the run: {where}{error.strerror or error}; finished episodes are "
            f"kept in {run_dir}; once there is room (or the folder is writable) continue "
            f"with --resume {run_dir}") from error
