"""Value checks for parsed arenas: what AAI would accept but is almost surely a mistake.

``llm_aai.arena.schema`` already rejects what AAI itself rejects (unknown keys, wrong types,
malformed tags). This module judges the *values*. Each rule follows what AAI does with the
value (docs/animal-ai-facts.md sections 4-6):

Errors (the file is invalid):
- Unknown object name: AAI silently skips it, so a typo makes an object vanish. Close
  matches are suggested.
- NaN or infinite numbers anywhere: AAI's arithmetic has no meaning for them.
- x or z above 40: AAI clamps to 40, the object pokes through the fence and is dropped.
- Negative time limit ``t``: 0 already means "no limit"; a negative value is a typo.
- A changing goal's ``initialValues``/``finalValues``/``changeRates``/``delays``: numbers,
  no more entries than the item has instances, and an initial value above 0 (it is the
  ball's diameter).
- Blackouts: a negative first value (periodic) must be alone; otherwise values must be
  non-negative and strictly increasing, and not beyond ``t``. AAI 4.x throws on these; 3.x
  silently misbehaved.

Warnings (reported, the file stays valid, since AAI accepts the value):
- A negative number other than the documented ``-1`` marker in a position, size, rotation
  or colour: AAI treats any negative as "random" (y: as 0), which may not be what was meant.
- A size outside the object's range: AAI clamps it (e.g. a DeathZone of height 0 becomes
  0.5), a common and harmless shorthand, so only sizes *above* the maximum are reported.
- A colour channel above 255: the renderer saturates it.
- y above ``MAX_Y`` (50 m): far above the 10 m wall limit. Not an error because the testbed
  itself parks a box at y=1500 (05-30-*), letting it fall into the arena. Above
  ``HIGHEST_Y`` (10 km) it is an error: the object would not land within an episode, and
  MuJoCo voids a world with coordinates near 1e10.
- Objects AAI knows but the embedded simulator does not build (spawners, sign boards,
  growing and shrinking goals...).
- More than one Agent (item or instance): AAI uses only the first.
- Negative arena ids: AAI renumbers them.

Zero sizes are accepted silently: AAI clamps them to the minimum and the testbed relies on it.

``load_config`` refuses a file with any error (``require_valid``), so no episode plays an arena
other than the one written; warnings never stop a file from loading.
"""

from __future__ import annotations

import difflib

from llm_aai.arena.errors import ArenaError
from llm_aai.arena.model import Arena, ArenaConfig, Item, is_finite
from llm_aai.arena.objects import OBJECTS, Kind, lookup
from llm_aai.arena.timings import TIMING_KEYS, numbers

ARENA_SIZE = 40.0
MAX_Y = 50.0
"""Above this y a warning is given; AAI has no ceiling but walls are at most 10 m tall."""
HIGHEST_Y = 10_000.0
"""Above this y an error: an object dropped from there needs longer than any episode to land
(the testbed's highest is 1,500 m), and near 1e10 MuJoCo gives up on the world."""

AAI_ONLY_OBJECTS = frozenset({
    "GrowGoal", "ShrinkGoal", "SpawnerTree",
    "SpawnerDispenserTall", "SpawnerDispenser", "SpawnerContainerShort", "SpawnerContainer",
    "SpawnerButton", "Pillar-Button", "SignBoard", "SignPosterboard", "HollowBox", "DataZone",
})
"""Objects AAI builds that the embedded simulator does not (docs/animal-ai-facts.md §4)."""


class _Report:
    """Collects problems for one file."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[ArenaError] = []

    def add(self, line: int | None, field: str, message: str, severity: str = "error") -> None:
        self.problems.append(ArenaError(message, file=self.source, line=line, field=field,
                                        severity=severity))

    def warn(self, line: int | None, field: str, message: str) -> None:
        self.add(line, field, message, "warning")


def _line_of(thing: Item | Arena, key: str | tuple[str, ...]) -> int | None:
    lines = dict(thing.key_lines)
    for k in (key,) if isinstance(key, str) else key:
        if k in lines:
            return lines[k]
    return thing.location.line if thing.location else None


def _check_name(report: _Report, item: Item) -> bool:
    """Check the object name; return True when the object's ranges can be checked."""
    line = _line_of(item, "name")
    try:
        lookup(item.name)
        return True
    except KeyError:
        pass
    if item.name in AAI_ONLY_OBJECTS:
        report.warn(line, "name", f"{item.name} is an AAI object the embedded simulator does "
                    "not build; it will be skipped there (the unity backend runs it)")
        return False
    known = sorted({*OBJECTS, *AAI_ONLY_OBJECTS})
    close = difflib.get_close_matches(item.name, known, n=3, cutoff=0.6)
    hint = (f"did you mean {' or '.join(close)}?" if close
            else f"known: {', '.join(sorted(OBJECTS))}")
    report.add(line, "name", f"unknown object {item.name!r} ({hint}); AAI would skip it")
    return False


def _check_marker(report: _Report, line, field: str, value: float, meaning: str) -> bool:
    """Report NaN (error) or a negative other than -1 (warning); True if value is ordinary."""
    if not is_finite(value):
        report.add(line, field, f"{value} is not a usable number")
        return False
    if value < 0:
        if value != -1:
            report.warn(line, field, f"{value:g} is negative: AAI treats it as {meaning}; "
                        "write -1 if that is meant")
        return False
    return True


def _vector_line(item: Item, vector, key: str) -> int | None:
    return vector.location.line if vector.location else _line_of(item, key)


def _check_positions(report: _Report, item: Item) -> None:
    for vec in item.positions:
        line = _vector_line(item, vec, "positions")
        for axis in "xz":
            value = getattr(vec, axis)
            if _check_marker(report, line, "positions", value, "random") and value > ARENA_SIZE:
                report.add(line, "positions", f"{axis}={value:g} is outside the arena: x and z "
                           f"must be in [0, {ARENA_SIZE:g}] (-1 = random)")
        if not _check_marker(report, line, "positions", vec.y, "0 (ground level)"):
            continue
        if vec.y > HIGHEST_Y:
            report.add(line, "positions", f"y={vec.y:g} is too high: y must be at most "
                       f"{HIGHEST_Y:,.0f} m, from where a dropped object lands within an episode")
        elif vec.y > MAX_Y:
            report.warn(line, "positions", f"y={vec.y:g} is far above the arena (over "
                        f"{MAX_Y:g} m); AAI lets it fall from there")


def _check_sizes(report: _Report, item: Item, checkable: bool) -> None:
    spec = lookup(item.name) if checkable else None
    for vec in item.sizes:
        line = _vector_line(item, vec, "sizes")
        axes = "x" if spec is not None and spec.kind is Kind.GOAL else "xyz"
        for i, axis in enumerate("xyz"):
            value = getattr(vec, axis)
            ordinary = _check_marker(report, line, "sizes", value, "a random size")
            if ordinary and spec is not None and axis in axes and value > spec.size_max[i]:
                report.warn(line, "sizes", f"{axis}={value:g} is above {spec.name}'s maximum "
                            f"{spec.size_max[i]:g}; AAI clamps it")


def _check_rotations_and_colors(report: _Report, item: Item) -> None:
    line = _line_of(item, "rotations")
    for value in item.rotations:
        _check_marker(report, line, "rotations", value, "a random rotation")
    for color in item.colors:
        line = _vector_line(item, color, "colors")
        for channel in "rgb":
            value = getattr(color, channel)
            if _check_marker(report, line, "colors", value, "a random channel") and value > 255:
                report.warn(line, "colors", f"{channel}={value:g} is above 255; it saturates")


def _check_timings(report: _Report, item: Item, checkable: bool) -> None:
    """A changing goal's lists: numbers, finite, no longer than the item's instances."""
    if not checkable or lookup(item.name).change is None:
        return
    for key in TIMING_KEYS:
        if key not in dict(item.extra):
            continue
        line = _line_of(item, key)
        try:
            values = numbers(item, key)
        except ValueError as error:
            report.add(line, key, str(error))
            continue
        if not all(is_finite(v) for v in values):
            report.add(line, key, f"{list(values)} holds a number that is not usable")
        elif len(values) > item.instance_count:
            report.add(line, key, f"{len(values)} entries for {item.instance_count} "
                       f"{item.name}(s): Unity would spawn the extra ones at random; give "
                       "each one a position or shorten the list")
    initials = numbers(item, "initialValues") if _numeric(item, "initialValues") else ()
    for value in initials:
        if is_finite(value) and value <= 0:
            report.add(_line_of(item, "initialValues"), "initialValues",
                       f"{value:g}: a {item.name}'s diameter is its initial value, so "
                       "this ball would have no size and could never be touched")


def _numeric(item: Item, key: str) -> bool:
    try:
        numbers(item, key)
    except ValueError:
        return False
    return True


def _check_blackouts(report: _Report, arena: Arena) -> None:
    values, line = arena.blackouts, _line_of(arena, "blackouts")
    if not values:
        return
    if values[0] < 0:
        if len(values) > 1:
            report.add(line, "blackouts", f"a negative first value ({values[0]}) means 'toggle "
                       "every N' and must be the only value")
        return
    if any(v < 0 for v in values):
        report.add(line, "blackouts", "only the first value may be negative (periodic)")
    elif any(b <= a for a, b in zip(values, values[1:], strict=False)):
        report.add(line, "blackouts", f"values must be strictly increasing, got {list(values)}")
    elif arena.time_limit > 0 and values[-1] > arena.time_limit:
        report.add(line, "blackouts", f"last value {values[-1]} is beyond the time limit "
                   f"t={arena.time_limit}")


def _check_arena(report: _Report, arena: Arena) -> None:
    if arena.time_limit < 0:
        report.add(_line_of(arena, ("t", "timeLimit")), _time_key(arena),
                   f"{arena.time_limit} is negative; use 0 for no time limit")
    if not is_finite(arena.pass_mark):
        report.add(_line_of(arena, ("pass_mark", "passMark")), "pass_mark",
                   f"{arena.pass_mark} is not a usable number")
    _check_blackouts(report, arena)
    agents = [item for item in arena.items if item.name == "Agent"]
    for extra in agents[1:]:
        report.warn(_line_of(extra, "name"), "name", "a second Agent item; AAI uses the first")
    if agents and agents[0].instance_count > 1:
        report.warn(_line_of(agents[0], "positions"), "positions",
                    "the Agent has several instances; AAI uses only the first")
    for item in arena.items:
        checkable = _check_name(report, item)
        _check_positions(report, item)
        _check_sizes(report, item, checkable)
        _check_rotations_and_colors(report, item)
        _check_timings(report, item, checkable)


def _time_key(arena: Arena) -> str:
    return "timeLimit" if "timeLimit" in dict(arena.key_lines) else "t"


def validate_config(config: ArenaConfig) -> list[ArenaError]:
    """Check every value of a parsed config against AAI's rules.

    Returns:
        All problems found, errors and warnings (``ArenaError.severity``), in file order.
        An empty list means the config is fine.

    """
    report = _Report(config.source or "<config>")
    for arena_id, arena in config.arenas:
        if arena_id < 0:
            report.warn(arena.location.line if arena.location else None, "arenas",
                        f"negative arena id {arena_id}; AAI renumbers it")
        _check_arena(report, arena)
    return sorted(report.problems, key=lambda p: p.line or 0)


def require_valid(config: ArenaConfig) -> ArenaConfig:
    """Return ``config``, or raise its first error as ``validate`` prints it.

    Raises:
        ArenaError: the first error in file order; the message counts any others.

    """
    errors = errors_only(validate_config(config))
    if not errors:
        return config
    first = errors[0]
    if len(errors) == 1:
        raise first
    raise ArenaError(f"{first.message} (and {len(errors) - 1} more error(s): "
                     f"python -m llm_aai.arenas validate {first.file} lists them)",
                     file=first.file, line=first.line, field=first.field)


def errors_only(problems: list[ArenaError]) -> list[ArenaError]:
    """Keep the problems that make a file invalid."""
    return [p for p in problems if p.severity == "error"]
