"""Turn parsed YAML records into the frozen arena model, checking keys and types.

This is the structural half of validation: which keys exist, and what type each value has.
AAI's YamlDotNet deserialiser aborts on an unknown key or a value of the wrong type, so both
are errors here too, reported at the offending line. Value checks that AAI would accept but
that are almost certainly mistakes live in ``llm_aai.arena.validate``.

Both spellings of the renamed arena keys are accepted (``t``/``timeLimit``,
``pass_mark``/``passMark``, ``random_seed``/``randomSeed``); giving both in one arena is an
error because it is ambiguous.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import Any

from llm_aai.arena.errors import ArenaError
from llm_aai.arena.model import RGB, Arena, ArenaConfig, Item, SourceLocation, Vector3
from llm_aai.arena.yaml_io import Node, Seq

CONFIG_KEYS = {
    "arenas": "arenas",
    "randomizeArenas": "randomize_arenas",
    "showNotification": "show_notification",
    "canResetEpisode": "can_reset_episode",
    "canChangePerspective": "can_change_perspective",
}
ARENA_KEYS = {
    "t": "time_limit", "timeLimit": "time_limit",
    "pass_mark": "pass_mark", "passMark": "pass_mark",
    "random_seed": "random_seed", "randomSeed": "random_seed",
    "blackouts": "blackouts", "mergeNextArena": "merge_next_arena", "items": "items",
}
ITEM_EXTRA_KEYS = (
    "symbolNames", "delays", "initialValues", "finalValues", "spawnCounts", "spawnColors",
    "timesBetweenSpawns", "doorDelays", "timesBetweenDoorOpens", "changeRates", "ripenTimes",
    "moveDurations", "resetDurations", "spawnProbability", "rewardNames", "rewardWeights",
    "rewardSpawnPos", "maxRewardCounts", "triggerZoneID", "zoneVisibility",
)
ITEM_KEYS = ("name", "positions", "rotations", "sizes", "colors", "skins", "frozenAgentDelays",
             *ITEM_EXTRA_KEYS)

# YAML 1.1 (PyYAML) reads "1e3" as a string; YamlDotNet reads it as a number.
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


class _Ctx:
    """The file being converted, so every error can name it."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, line: int | None, key: str | None, message: str) -> ArenaError:
        return ArenaError(message, file=self.source, line=line, field=key)

    def loc(self, line: int) -> SourceLocation:
        return SourceLocation(self.source, line)


def _describe(value: Any) -> str:
    if isinstance(value, Node):
        return f"a {value.tag} mapping" if value.tag else "a mapping"
    if isinstance(value, Seq):
        return "a list"
    if value is None:
        return "nothing (null)"
    return f"{type(value).__name__} {value!r}"


def _number(ctx: _Ctx, value: Any, line: int, key: str) -> float:
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ctx.error(line, key, f"expected a number, got {_describe(value)}")
    return float(value) if not isinstance(value, int) else value


def _integer(ctx: _Ctx, value: Any, line: int, key: str) -> int:
    number = _number(ctx, value, line, key)
    if isinstance(number, float):
        if not number.is_integer():
            raise ctx.error(line, key, f"expected a whole number, got {number!r}")
        number = int(number)
    return number


def _bool(ctx: _Ctx, value: Any, line: int, key: str) -> bool:
    if not isinstance(value, bool):
        raise ctx.error(line, key, f"expected true or false, got {_describe(value)}")
    return value


def _seq(ctx: _Ctx, value: Any, line: int, key: str) -> Seq:
    if value is None:  # "key:" with nothing after it: YamlDotNet leaves the list empty
        return Seq(line)
    if not isinstance(value, Seq):
        raise ctx.error(line, key, f"expected a list, got {_describe(value)}")
    return value


def _mapping(ctx: _Ctx, value: Any, line: int, key: str, tag: str) -> Node:
    if not isinstance(value, Node):
        raise ctx.error(line, key, f"expected a {tag} mapping, got {_describe(value)}")
    if value.tag not in (None, tag):
        raise ctx.error(value.line, key, f"expected {tag}, got {value.tag}")
    return value


def _check_keys(ctx: _Ctx, node: Node, known, what: str) -> None:
    for key, line in node.key_lines.items():
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), [str(k) for k in known], n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
        raise ctx.error(line, str(key), f"unknown {what} key ({hint}); AAI rejects the file")


def _vector(ctx: _Ctx, value: Any, line: int, key: str, tag: str, fields: str):
    node = _mapping(ctx, value, line, key, tag)
    _check_keys(ctx, node, tuple(fields), tag)
    numbers = {name: _number(ctx, node.values[name], node.key_lines[name], f"{key}.{name}")
               for name in fields if name in node.values}
    cls = Vector3 if tag == "!Vector3" else RGB
    numbers = {name: float(v) for name, v in numbers.items()}
    return cls(**numbers, location=ctx.loc(node.line))  # a missing field is 0, as in AAI


def _list_of(ctx: _Ctx, node: Node, key: str, convert) -> tuple:
    if key not in node.values:
        return ()
    seq = _seq(ctx, node.values[key], node.key_lines[key], key)
    return tuple(convert(v, ln) for v, ln in zip(seq.values, seq.lines, strict=True))


def _extra_value(ctx: _Ctx, value: Any, line: int, key: str) -> Any:
    if isinstance(value, Seq):
        return tuple(_extra_value(ctx, v, ln, key)
                     for v, ln in zip(value.values, value.lines, strict=True))
    if isinstance(value, Node):
        if value.tag == "!Vector3":
            return _vector(ctx, value, line, key, "!Vector3", "xyz")
        if value.tag == "!RGB":
            return _vector(ctx, value, line, key, "!RGB", "rgb")
        raise ctx.error(line, key, f"expected a list or a value, got {_describe(value)}")
    return value


def _item(ctx: _Ctx, value: Any, line: int) -> Item:
    node = _mapping(ctx, value, line, "items", "!Item")
    _check_keys(ctx, node, ITEM_KEYS, "item")
    if "name" not in node.values:
        raise ctx.error(node.line, "name", "every !Item needs a name (e.g. name: Wall)")
    name = node.values["name"]
    if not isinstance(name, str) or not name:
        raise ctx.error(node.key_lines["name"], "name",
                        f"expected an object name, got {_describe(name)}")

    def vec(key, tag="!Vector3", fields="xyz"):
        return _list_of(ctx, node, key, lambda v, ln: _vector(ctx, v, ln, key, tag, fields))

    def strings(key):
        def one(v, ln):
            if not isinstance(v, str):
                raise ctx.error(ln, key, f"expected a name, got {_describe(v)}")
            return v
        return _list_of(ctx, node, key, one)

    extra = tuple((key, _extra_value(ctx, node.values[key], node.key_lines[key], key))
                  for key in node.values if key in ITEM_EXTRA_KEYS)
    return Item(
        name=name,
        positions=vec("positions"),
        rotations=_list_of(ctx, node, "rotations",
                           lambda v, ln: float(_number(ctx, v, ln, "rotations"))),
        sizes=vec("sizes"),
        colors=vec("colors", "!RGB", "rgb"),
        skins=strings("skins"),
        frozen_agent_delays=_list_of(
            ctx, node, "frozenAgentDelays",
            lambda v, ln: float(_number(ctx, v, ln, "frozenAgentDelays"))),
        extra=extra,
        location=ctx.loc(node.line),
        key_lines=tuple((str(k), ln) for k, ln in node.key_lines.items()),
    )


def _arena(ctx: _Ctx, value: Any, line: int) -> Arena:
    node = _mapping(ctx, value, line, "arenas", "!Arena")
    _check_keys(ctx, node, tuple(ARENA_KEYS), "arena")
    fields: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for key, raw in node.values.items():
        ln = node.key_lines[key]
        name = ARENA_KEYS[key]
        if name in seen:
            raise ctx.error(ln, key, f"given twice, as {seen[name]!r} and {key!r}; keep one")
        seen[name] = key
        if name == "time_limit" or name == "random_seed":
            fields[name] = _integer(ctx, raw, ln, key)
        elif name == "pass_mark":
            fields[name] = float(_number(ctx, raw, ln, key))
        elif name == "merge_next_arena":
            fields[name] = _bool(ctx, raw, ln, key)
        elif name == "blackouts":
            fields[name] = tuple(_integer(ctx, v, vl, key) for v, vl in zip(
                _seq(ctx, raw, ln, key).values, _seq(ctx, raw, ln, key).lines, strict=True))
        else:  # items
            seq = _seq(ctx, raw, ln, key)
            fields[name] = tuple(_item(ctx, v, vl)
                                 for v, vl in zip(seq.values, seq.lines, strict=True))
    return Arena(**fields, location=ctx.loc(node.line),
                 key_lines=tuple((str(k), ln) for k, ln in node.key_lines.items()))


def config_from_node(root: Any, source: str, line: int = 1) -> ArenaConfig:
    """Build an ``ArenaConfig`` from the loader's records.

    Raises:
        ArenaError: a key is unknown, a value has the wrong type, or the shape is wrong.

    """
    ctx = _Ctx(source)
    if root is None:
        raise ctx.error(None, None, "empty file; an arena file starts with !ArenaConfig")
    if not isinstance(root, Node):
        raise ctx.error(getattr(root, "line", line), None,
                        f"expected an !ArenaConfig mapping at the top level, got "
                        f"{_describe(root)}")
    node = _mapping(ctx, root, root.line, "!ArenaConfig", "!ArenaConfig")
    _check_keys(ctx, node, tuple(CONFIG_KEYS), "!ArenaConfig")
    if "arenas" not in node.values:
        raise ctx.error(node.line, "arenas", "missing; an !ArenaConfig needs arenas: {0: !Arena}")
    arenas_line = node.key_lines["arenas"]
    arenas = node.values["arenas"]
    if not isinstance(arenas, Node) or arenas.tag is not None:
        raise ctx.error(arenas_line, "arenas",
                        f"expected a mapping of arena ids to !Arena, got {_describe(arenas)}")
    if not arenas.values:
        raise ctx.error(arenas_line, "arenas", "no arenas given")
    built = []
    for arena_id, value in arenas.values.items():
        ln = arenas.key_lines[arena_id]
        if isinstance(arena_id, bool) or not isinstance(arena_id, int):
            raise ctx.error(ln, "arenas", f"arena ids must be integers, got {arena_id!r}")
        built.append((arena_id, _arena(ctx, value, ln)))
    flags = {CONFIG_KEYS[k]: _bool(ctx, v, node.key_lines[k], k)
             for k, v in node.values.items() if k != "arenas"}
    return ArenaConfig(arenas=tuple(built), source=source, **flags)


def is_finite(value: float) -> bool:
    """Whether a parsed number is usable (YAML allows .nan and .inf)."""
    return not (math.isnan(value) or math.isinf(value))
