"""The recorded settings a resume must not take from a run folder it cannot vouch for.

A run folder is shared between labs, so its manifest is untrusted input, yet ``--resume``
takes its settings from it. Three of them decide where the user's data goes or what runs on
this machine: ``--api-base`` (the model's endpoint, sent the user's API key), ``--ray-address``
(a cluster sent the job, and the key with it) and ``--unity-build`` (a program the run
starts). A run folder cannot vouch for itself, so this user's key does: when a run is made
with any of them, ``vouch`` writes ``routing.hmac`` beside its manifest, an HMAC-SHA256 of the
run id and those values under a random key kept in the user's config folder (``run-key``,
0600, made on first use, never in a run folder). ``unvouched`` gives back the recorded values
that mark does not match: a run from elsewhere, copied from another machine, or whose manifest
was edited since. A resume takes none of those; each is given again on the command line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path

from llm_aai.logs.schema import RunManifest
from llm_aai.settings import RunConfig

__all__ = ["MARK", "ROUTING", "KeyUnusable", "key_path", "routing_of", "unvouched", "vouch"]

ROUTING = {"model_options.api_base": ("api_base", "--api-base"),
           "ray_address": ("ray_address", "--ray-address"),
           "unity_build": ("unity_build", "--unity-build")}
"""Each routing setting (a dotted config field) -> its ``ResumeOverrides`` field and flag."""

MARK = "routing.hmac"
"""The file in a run folder holding the HMAC of its run id and routing values."""

_KEY_BYTES = 32
_MARK_LIMIT = 256  # a hex SHA-256 and a newline; a larger file is not a mark


class KeyUnusable(OSError):
    """The user's key cannot vouch for runs: unreadable, or others could read or replace it."""


CONFIG_ENV = "LLM_AAI_CONFIG_DIR"
"""A folder to keep ``run-key`` in instead of the user's config folder (tests, several keys)."""


def key_path() -> Path:
    """``run-key`` in ``$LLM_AAI_CONFIG_DIR``, else the user's config folder.

    The config folder is ``$XDG_CONFIG_HOME/llm-aai`` on Linux; macOS and Windows have their
    own, which ignore ``XDG_CONFIG_HOME``, hence the project's own variable.
    """
    chosen = os.environ.get(CONFIG_ENV)
    if chosen:
        return Path(chosen) / "run-key"
    import platformdirs

    return platformdirs.user_config_path("llm-aai") / "run-key"


def routing_of(config: RunConfig) -> dict[str, str]:
    """The routing settings ``config`` sets, as text, by dotted field."""
    return {dotted: str(value) for dotted in ROUTING
            if (value := config.value_of(dotted)) is not None}


def vouch(run_dir: Path, manifest: RunManifest, config: RunConfig) -> None:
    """Write the mark of a run made here in ``run_dir``, if its config sets a routing value.

    Raises:
        KeyUnusable: the key could not be made or read (the file named); the run then has no
            mark, and a resume must be given its routing flags again.

    """
    routing = routing_of(config)
    if not routing:
        return
    key = _read_key(create=True)
    (run_dir / MARK).write_text(_mark(key, manifest.run_id, routing) + "\n")


def unvouched(run_dir: Path, manifest: RunManifest, config: RunConfig,
              ) -> tuple[dict[str, str], str | None]:
    """The recorded routing values this user's key does not vouch for, and why not.

    ``config`` is the run's recorded one. Every routing value it sets is unvouched unless
    ``run_dir`` holds a mark made with this user's key over the manifest's run id and exactly
    these values. The reason is None when every value is vouched for.
    """
    routing = routing_of(config)
    if not routing:
        return {}, None
    found = _read_mark(run_dir / MARK)
    if found is None:
        return routing, f"{run_dir} holds no {MARK} made on this machine"
    try:
        key = _read_key(create=False)
    except KeyUnusable as error:
        return routing, str(error)
    if key is None:
        return routing, f"there is no key to check its {MARK} with ({key_path()})"
    if not hmac.compare_digest(found, _mark(key, manifest.run_id, routing)):
        return routing, (f"its {MARK} does not match its manifest (made elsewhere, or the "
                         "manifest was edited since)")
    return {}, None


def _mark(key: bytes, run_id: str | None, routing: dict[str, str]) -> str:
    message = json.dumps({"purpose": "llm-aai run routing", "version": 1, "run_id": run_id,
                          "routing": routing}, sort_keys=True)
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def _read_mark(path: Path) -> str | None:
    """The mark's text, or None: absent, not a plain file (a link, a FIFO), or too large."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return None
        data = file.read(_MARK_LIMIT + 1)
    if len(data) > _MARK_LIMIT:
        return None
    return data.decode("ascii", errors="replace").strip()


def _read_key(*, create: bool) -> bytes | None:
    """The user's key; made first (0600, in a 0700 folder) with ``create``, else None if absent.

    Raises:
        KeyUnusable: the key file is not a plain file of this user that only they can read
            and write, or cannot be made or read.

    """
    path = key_path()
    try:
        return _checked_key(path)
    except FileNotFoundError:
        if not create:
            return None
    try:
        _make_key(path)
        return _checked_key(path)
    except KeyUnusable:
        raise
    except OSError as error:
        raise KeyUnusable(f"cannot make the key {path}: {error.strerror or error}") from None


def _checked_key(path: Path) -> bytes:
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise KeyUnusable(f"cannot read the key {path}: {error.strerror or error}") from None
    with os.fdopen(handle, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise KeyUnusable(f"the key {path} is not a plain file")
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise KeyUnusable(f"the key {path} could be read or replaced by other users "
                              f"(mode {stat.S_IMODE(info.st_mode):o}); chmod 600 it, or "
                              "remove it to make a new one")
        text = file.read(4 * _KEY_BYTES).decode("ascii", errors="replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        raise KeyUnusable(f"the key {path} is not {_KEY_BYTES} bytes in hex; remove it to "
                          "make a new one")
    return key


def _make_key(path: Path) -> None:
    """Write a new key whole, or leave the one another process made at the same time."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    handle = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(handle, "w") as file:
            file.write(secrets.token_hex(_KEY_BYTES) + "\n")
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(staging, path)  # never replaces a key: the first one made is kept
        except FileExistsError:
            pass
    finally:
        staging.unlink(missing_ok=True)
