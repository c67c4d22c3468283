"""Load Animal-AI arena files (parse, build the model, validate) and write them back.

This is the one way into an arena file: ``llm_aai.arena.yaml_nodes`` parses the text safely
and within the limits of ``llm_aai.arena.limits``, ``llm_aai.arena.schema`` builds the frozen
model, and ``llm_aai.arena.validate`` judges its values. ``dump_config`` writes a model back
as AAI YAML.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from llm_aai.arena.errors import ArenaError
from llm_aai.arena.limits import MAX_FILE_BYTES, check_size
from llm_aai.arena.model import RGB, Arena, ArenaConfig, Item, Vector3
from llm_aai.arena.schema import config_from_node
from llm_aai.arena.validate import require_valid, validate_config
from llm_aai.arena.yaml_nodes import parse_nodes


def loads_config(text: str, source: str = "<string>") -> ArenaConfig:
    """Parse the text of an arena file.

    Args:
        text: YAML text starting with ``!ArenaConfig``.
        source: file name used in error messages.

    Raises:
        ArenaError: the text is not a well-formed AAI arena configuration, or is beyond the
            limits of ``llm_aai.arena.limits``.

    """
    root, line = parse_nodes(text, source)
    return config_from_node(root, source, line)


def load_config(path: str | Path, *, check: bool = True) -> ArenaConfig:
    """Read and parse an arena file (UTF-8 YAML).

    Args:
        path: the file.
        check: also refuse values ``python -m llm_aai.arenas validate`` calls errors, such as
            an unknown object name, which AAI and the simulator would silently skip: an
            episode on such a file plays another arena than the one written. Only the
            validator, which reports every problem rather than the first, passes False.

    Raises:
        ArenaError: the file cannot be read, is not text, is too large, or is not a valid
            arena file.

    """
    source = str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)  # a huge file is never read whole
    except OSError as exc:
        raise ArenaError(f"cannot read file: {exc.strerror or exc}", file=source) from None
    check_size(raw, source)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ArenaError("not a text file (invalid UTF-8); arena files are YAML text",
                         file=source, line=line, field="yaml") from None
    config = loads_config(text, source)
    return require_valid(config) if check else config


def check_file(path: str | Path) -> list[ArenaError]:
    """Load and validate one file; a load failure is returned as a single error."""
    try:
        config = load_config(path, check=False)
    except ArenaError as exc:
        return [exc]
    return validate_config(config)


# -- dumping -------------------------------------------------------------------------------

OLD_KEYS = {"time_limit": "t", "pass_mark": "pass_mark", "random_seed": "random_seed"}
NEW_KEYS = {"time_limit": "timeLimit", "pass_mark": "passMark", "random_seed": "randomSeed"}


def _num(value: float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    return str(int(value)) if value.is_integer() else repr(value)


def _scalar(value: Any) -> str:
    if isinstance(value, bool | int | float):
        return _num(value)
    if isinstance(value, Vector3):
        return f"!Vector3 {{x: {_num(value.x)}, y: {_num(value.y)}, z: {_num(value.z)}}}"
    if isinstance(value, RGB):
        return f"!RGB {{r: {_num(value.r)}, g: {_num(value.g)}, b: {_num(value.b)}}}"
    if value is None:
        return "null"
    return yaml.safe_dump(value, default_flow_style=True, width=10**9).strip().removesuffix(
        "\n...").removesuffix("...").strip()


def _flow_list(values) -> str:
    return "[" + ", ".join(_scalar(v) for v in values) + "]"


def _dump_list(key: str, values, indent: str) -> list[str]:
    if not values:
        return []
    if any(isinstance(v, Vector3 | RGB) for v in values):
        return [f"{indent}{key}:", *(f"{indent}- {_scalar(v)}" for v in values)]
    return [f"{indent}{key}: {_flow_list(values)}"]


def _dump_item(item: Item) -> list[str]:
    pad = "      "
    lines = ["    - !Item", f"{pad}name: {_scalar(item.name)}"]
    lines += _dump_list("positions", item.positions, pad)
    lines += _dump_list("rotations", item.rotations, pad)
    lines += _dump_list("sizes", item.sizes, pad)
    lines += _dump_list("colors", item.colors, pad)
    lines += _dump_list("skins", item.skins, pad)
    lines += _dump_list("frozenAgentDelays", item.frozen_agent_delays, pad)
    for key, value in item.extra:
        if isinstance(value, tuple):
            lines += _dump_list(key, value, pad) or [f"{pad}{key}: []"]
        else:
            lines.append(f"{pad}{key}: {_scalar(value)}")
    return lines


def _dump_arena(arena_id: int, arena: Arena, keys: dict[str, str]) -> list[str]:
    lines = [f"  {arena_id}: !Arena", f"    {keys['time_limit']}: {_num(arena.time_limit)}",
             f"    {keys['pass_mark']}: {_num(arena.pass_mark)}"]
    if arena.blackouts:
        lines.append(f"    blackouts: {_flow_list(arena.blackouts)}")
    if arena.random_seed:
        lines.append(f"    {keys['random_seed']}: {arena.random_seed}")
    if arena.merge_next_arena:
        lines.append("    mergeNextArena: true")
    lines.append("    items:" if arena.items else "    items: []")
    for item in arena.items:
        lines += _dump_item(item)
    return lines


def dump_config(config: ArenaConfig, *, spelling: str = "old") -> str:
    """Write a config as AAI YAML that ``loads_config`` reads back to an equal config.

    Args:
        config: the configuration.
        spelling: ``"old"`` writes ``t``/``pass_mark`` (AAI 3.x-4.0, the testbed and the
            paper's build); ``"new"`` writes ``timeLimit``/``passMark`` (AAI 4.1+).

    Returns:
        The YAML text.

    """
    if spelling not in ("old", "new"):
        raise ValueError(f"spelling must be 'old' or 'new', not {spelling!r}")
    keys = OLD_KEYS if spelling == "old" else NEW_KEYS
    lines = ["!ArenaConfig"]
    for flag, key, default in (
        (config.randomize_arenas, "randomizeArenas", False),
        (config.show_notification, "showNotification", False),
        (config.can_reset_episode, "canResetEpisode", True),
        (config.can_change_perspective, "canChangePerspective", True),
    ):
        if flag != default:
            lines.append(f"{key}: {_num(flag)}")
    lines.append("arenas:")
    for arena_id, arena in config.arenas:
        lines += _dump_arena(arena_id, arena, keys)
    return "\n".join(lines) + "\n"
