"""Turn parsed YAML records into the frozen arena model, checking keys and types.

This is the structural half of validation: which keys exist, and what type each value has.
AAI's YamlDotNet deserialiser aborts on an unknown key or a value of the wrong type, so both
are errors here too, reported at the offending line. Value checks that AAI would accept but
that are almost certainly mistakes live in ``llm_aai.arena.validate``.

Numbers must fit the 32-bit C# fields AAI reads them into (``int`` for ``t``, seeds, blackouts
and arena ids; ``float`` for everything else): YamlDotNet refuses larger ones, and a huge
value would overflow our arithmetic mid-run. The size limits of ``llm_aai.arena.limits``
(lists, items, objects) are checked here as well, each at the line of its list.

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
from llm_aai.arena.limits import MAX_ARENAS, MAX_ENTRIES, MAX_ITEMS, MAX_OBJECTS, check_count
from llm_aai.arena.model import RGB, Arena, ArenaConfig, Item, SourceLocation, Vector3
from llm_aai.arena.yaml_nodes import Node, Seq

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

# AAI's C# fields are 32-bit: ``int`` (t, seeds, blackouts, arena ids) and ``float``
# (coordinates, sizes, rotations, colours, pass marks). YamlDotNet refuses a number that does
# not fit, and so do we, naming the field (a larger one would also overflow our arithmetic).
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
FLOAT32_MAX = 3.4028234663852886e38


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


def _short(number: float) -> str:
    """A number as a message can show it: ``1e+308``, or ``a 400-digit number``."""
    if isinstance(number, int) and len(str(abs(number))) > 15:
        return f"a {len(str(abs(number)))}-digit number"
    return f"{number:g}"


def _number(ctx: _Ctx, value: Any, line: int, key: str) -> float:
    """A number that fits AAI's 32-bit float (NaN and infinity pass: ``validate`` judges them)."""
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ctx.error(line, key, f"expected a number, got {_describe(value)}")
    finite = isinstance(value, int) or math.isfinite(value)  # a huge int has no float
    if finite and abs(value) > FLOAT32_MAX:
        raise ctx.error(line, key, f"{_short(value)} is beyond the range of AAI's 32-bit "
                        f"numbers (at most {FLOAT32_MAX:.4g} in size)")
    return float(value) if not isinstance(value, int) else value


def _integer(ctx: _Ctx, value: Any, line: int, key: str) -> int:
    """A whole number that fits AAI's 32-bit ``int``."""
    number = _number(ctx, value, line, key)
    if isinstance(number, float):
        if not number.is_integer():
            raise ctx.error(line, key, f"expected a whole number, got {number!r}")
        number = int(number)
    if not INT32_MIN <= number <= INT32_MAX:
        raise ctx.error(line, key, f"{_short(number)} is beyond the range of AAI's 32-bit "
                        f"integers ({INT32_MIN:,} to {INT32_MAX:,})")
    return number


def _bool(ctx: _Ctx, value: Any, line: int, key: str) -> bool:
    if not isinstance(value, bool):
        raise ctx.error(line, key, f"expected true or false, got {_describe(value)}")
    return value


def _seq(ctx: _Ctx, value: Any, line: int, key: str, limit: int = MAX_ENTRIES) -> Seq:
    if value is None:  # "key:" with nothing after it: YamlDotNet leaves the list empty
        return Seq(line)
    if not isinstance(value, Seq):
        raise ctx.error(line, key, f"expected a list, got {_describe(value)}")
    check_count(len(value.values), limit, "entries", source=ctx.source, line=line, field=key)
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
        seq = _seq(ctx, value, line, key)
        return tuple(_extra_value(ctx, v, ln, key)
                     for v, ln in zip(seq.values, seq.lines, strict=True))
    if isinstance(value, Node):
        if value.tag == "!Vector3":
            return _vector(ctx, value, line, key, "!Vector3", "xyz")
        if value.tag == "!RGB":
            return _vector(ctx, value, line, key, "!RGB", "rgb")
        raise ctx.error(line, key, f"expected a list or a value, got {_describe(value)}")
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric or (isinstance(value, str) and _NUMBER.fullmatch(value.strip())):
        _number(ctx, value, line, key)  # kept as written, but within AAI's range
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
            seq = _seq(ctx, raw, ln, key)
            fields[name] = tuple(_integer(ctx, v, vl, key)
                                 for v, vl in zip(seq.values, seq.lines, strict=True))
        else:  # items
            seq = _seq(ctx, raw, ln, key, MAX_ITEMS)
            fields[name] = tuple(_item(ctx, v, vl)
                                 for v, vl in zip(seq.values, seq.lines, strict=True))
            check_count(sum(item.instance_count for item in fields[name]), MAX_OBJECTS,
                        "objects (every instance of every item)", source=ctx.source, line=ln,
                        field=key)
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
    check_count(len(arenas.values), MAX_ARENAS, "arenas", source=source, line=arenas_line,
                field="arenas")
    built = []
    for arena_id, value in arenas.values.items():
        ln = arenas.key_lines[arena_id]
        if isinstance(arena_id, bool) or not isinstance(arena_id, int):
            raise ctx.error(ln, "arenas", f"arena ids must be integers, got {arena_id!r}")
        _integer(ctx, arena_id, ln, "arenas")
        built.append((arena_id, _arena(ctx, value, ln)))
    flags = {CONFIG_KEYS[k]: _bool(ctx, v, node.key_lines[k], k)
             for k, v in node.values.items() if k != "arenas"}
    return ArenaConfig(arenas=tuple(built), source=source, **flags)

