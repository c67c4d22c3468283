"""Read and write Animal-AI arena YAML safely, keeping line numbers for error messages.

The loader is a ``yaml.SafeLoader`` subclass: it builds only plain data and the five AAI tags
(``!ArenaConfig``, ``!Arena``, ``!Item``, ``!Vector3``, ``!RGB``), never Python objects, so a
config file cannot run code. Mappings and sequences are built as small records that remember
the line of every key and entry; ``llm_aai.arena.schema`` then turns them into the frozen
model, so a wrong value is reported as ``file:line: field: message``.

Untagged mappings are accepted wherever the type is implied by the position (an entry of
``items`` is an ``!Item``), as AAI's YamlDotNet does; a *different* tag there is an error.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from llm_aai.arena.errors import ArenaError
from llm_aai.arena.model import RGB, Arena, ArenaConfig, Item, Vector3

AAI_TAGS = ("!ArenaConfig", "!Arena", "!Item", "!Vector3", "!RGB")


@dataclass
class Node:
    """A parsed YAML mapping with the line of each key (1-based)."""

    tag: str | None
    line: int
    values: dict[Any, Any] = field(default_factory=dict)
    key_lines: dict[Any, int] = field(default_factory=dict)


@dataclass
class Seq:
    """A parsed YAML sequence with the line of each entry (1-based)."""

    line: int
    values: list[Any] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


# libyaml's C parser is ~10x faster (the whole testbed loads in about a second); the pure
# Python SafeLoader builds the very same nodes where PyYAML was installed without libyaml.
_SafeBase = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ArenaLoader(_SafeBase):
    """A safe loader that knows AAI's tags and records line numbers.

    It is created per document with the file name, so errors raised while building can name
    the file. Only the five AAI tags and YAML's plain types can be built.
    """

    def __init__(self, stream: str, source: str) -> None:
        super().__init__(stream)
        self.source = source


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _construct_mapping(loader: ArenaLoader, node: yaml.Node, tag: str | None = None) -> Node:
    if not isinstance(node, yaml.MappingNode):
        raise ArenaError(f"{tag} must be a mapping of keys to values, got a "
                         f"{_node_kind(node)}", file=loader.source, line=_line(node), field=tag)
    result = Node(tag, _line(node))
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise ArenaError("keys must be plain names or numbers", file=loader.source,
                             line=_line(key_node), field=tag)
        key = loader.construct_object(key_node, deep=True)
        if key in result.values:
            raise ArenaError(f"duplicate key (first given on line {result.key_lines[key]})",
                             file=loader.source, line=_line(key_node), field=str(key))
        result.values[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = _line(key_node)
    return result


def _construct_seq(loader: ArenaLoader, node: yaml.Node) -> Seq:
    result = Seq(_line(node))
    for child in node.value:
        result.values.append(loader.construct_object(child, deep=True))
        result.lines.append(_line(child))
    return result


def _tag_constructor(tag: str):
    def construct(loader: ArenaLoader, node: yaml.Node) -> Node:
        return _construct_mapping(loader, node, tag)

    return construct


def _construct_undefined(loader: ArenaLoader, node: yaml.Node) -> Any:
    close = difflib.get_close_matches(node.tag, AAI_TAGS, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"AAI knows {', '.join(AAI_TAGS)}"
    raise ArenaError(f"unknown tag {node.tag} ({hint})", file=loader.source, line=_line(node),
                     field="tag")


def _node_kind(node: yaml.Node) -> str:
    return {yaml.ScalarNode: "single value", yaml.SequenceNode: "list"}.get(type(node), "node")


for _tag in AAI_TAGS:
    ArenaLoader.add_constructor(_tag, _tag_constructor(_tag))
ArenaLoader.add_constructor("tag:yaml.org,2002:map", lambda ld, n: _construct_mapping(ld, n))
ArenaLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)
ArenaLoader.add_constructor(None, _construct_undefined)


def parse_nodes(text: str, source: str) -> tuple[Any, int]:
    """Parse YAML text into ``Node``/``Seq`` records and scalars.

    Returns:
        The document's root value and the line where it starts (1 for an empty document).

    Raises:
        ArenaError: the text is not YAML, holds several documents, or uses an unknown tag.

    """
    loader = ArenaLoader(text, source)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, 1
        return loader.construct_document(node), _line(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        parts = [str(p) for p in (exc.context, exc.problem) if p]
        joiner = ": " if parts and parts[0].startswith("while") else " "
        problem = " ".join(joiner.join(parts).split()) or "invalid YAML"
        raise ArenaError(f"not valid YAML: {problem}", file=source, line=line,
                         field="yaml") from None
    except yaml.YAMLError as exc:
        raise ArenaError(f"not valid YAML: {' '.join(str(exc).split())}", file=source,
                         field="yaml") from None
    finally:
        loader.dispose()


def loads_config(text: str, source: str = "<string>") -> ArenaConfig:
    """Parse the text of an arena file.

    Args:
        text: YAML text starting with ``!ArenaConfig``.
        source: file name used in error messages.

    Raises:
        ArenaError: the text is not a well-formed AAI arena configuration.

    """
    from llm_aai.arena.schema import config_from_node

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
        ArenaError: the file cannot be read, is not text, or is not a valid arena file.

    """
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ArenaError(f"cannot read file: {exc.strerror or exc}", file=source) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ArenaError("not a text file (invalid UTF-8); arena files are YAML text",
                         file=source, line=line, field="yaml") from None
    config = loads_config(text, source)
    if check:
        from llm_aai.arena.validate import require_valid

        require_valid(config)
    return config


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
