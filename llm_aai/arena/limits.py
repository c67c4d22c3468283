"""Size limits for arena files, checked before a file is built, so no input can exhaust us.

An arena file is untrusted input: it may come from a colleague, a download or a fuzzer. Left
unchecked, a few kilobytes of YAML can nest a million brackets deep (libyaml's composer
recurses and crashes the process) or name an anchor a million times (each alias expands to a
full copy once the arena is built). So the text is first read as YAML *events*, one at a time
and without building anything, and refused at the first event past a limit, with its line.
Only then is it composed into nodes.

Every limit is well above what the official testbed needs (its 900 files: at most 23 KB,
nesting depth 7, about 4,000 values, 11 items and 156 objects in an arena, 153 positions in
an item, values of at most 25 characters; ``tests/arena/test_hostile.py`` keeps each limit at
least three times the testbed's need), and low enough that the largest file they accept
loads in about half a second and 80 MB, and anything beyond them is refused sooner.
"""

from __future__ import annotations

from typing import Any

import yaml

from llm_aai.arena.errors import ArenaError

MAX_FILE_BYTES = 1 << 20
"""1 MiB: about 45 times the largest testbed file."""
MAX_DEPTH = 32
"""Nested mappings and lists (config, arenas, arena, items, item, list, vector: 7)."""
_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep; an arena needs 7"
MAX_NODES = 100_000
"""Values in the document, keys included, once every alias is expanded (testbed: 4,000)."""
MAX_SCALAR_CHARS = 1_000
"""Characters in one value: a name or a number never needs more."""
MAX_ARENAS = 100
"""Arenas in one file (the testbed has one per file)."""
MAX_ITEMS = 500
"""Items in one arena (the testbed has at most 11)."""
MAX_ENTRIES = 500
"""Entries in one list: an item's positions, rotations, sizes..., or blackouts (at most 153)."""
MAX_OBJECTS = 500
"""Objects in one arena, every instance of every item (at most 156). Placing objects costs
time quadratic in their number: 500 take a few seconds, 1,000 about half a minute."""

_OPENERS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSERS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _line(event: Any) -> int:
    return event.start_mark.line + 1


def check_size(data: str | bytes, source: str) -> None:
    """Refuse text (or the bytes of a file) longer than ``MAX_FILE_BYTES``.

    The error names the line where the limit is passed. A caller reading a file needs to
    read only ``MAX_FILE_BYTES + 1`` bytes of it to know.

    Raises:
        ArenaError: the data is too long.

    """
    if len(data) > MAX_FILE_BYTES:
        newline = b"\n" if isinstance(data, bytes) else "\n"
        line = data.count(newline, 0, MAX_FILE_BYTES) + 1
        raise ArenaError(f"the file is larger than the limit of {MAX_FILE_BYTES:,} bytes (it "
                         "passes it on this line); an arena file is a few kilobytes",
                         file=source, line=line, field="size")


def check_events(text: str, source: str, loader: type) -> None:
    """Walk the YAML events of ``text`` and refuse it at the first one beyond a limit.

    Nothing is built: each event is looked at once and dropped, so the time and memory this
    takes are bounded by the limits themselves, whatever the input. Syntax errors are left
    for the composer that follows to report.

    Args:
        text: the YAML text.
        source: the file name for error messages.
        loader: the loader class whose parser reads the events (libyaml's where installed).

    Raises:
        ArenaError: nesting deeper than ``MAX_DEPTH``, more than ``MAX_NODES`` values with
            aliases expanded, or a value longer than ``MAX_SCALAR_CHARS`` characters.

    """
    open_collections: list[tuple[int, str | None]] = []  # node count at start, anchor
    anchor_sizes: dict[str, int] = {}
    nodes = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.ScalarEvent):
                nodes += 1
                if len(event.value) > MAX_SCALAR_CHARS:
                    raise ArenaError(f"a value of {len(event.value):,} characters; the limit "
                                     f"is {MAX_SCALAR_CHARS:,}", file=source,
                                     line=_line(event), field="yaml")
                if event.anchor:
                    anchor_sizes[event.anchor] = 1
            elif isinstance(event, _OPENERS):
                nodes += 1
                open_collections.append((nodes - 1, event.anchor))
                if len(open_collections) > MAX_DEPTH:
                    raise ArenaError(_TOO_DEEP, file=source, line=_line(event), field="yaml")
            elif isinstance(event, _CLOSERS):
                start, anchor = open_collections.pop()
                if anchor:
                    anchor_sizes[anchor] = nodes - start
            elif isinstance(event, yaml.AliasEvent):
                # an anchor still open (a recursive alias) counts once: the composer refuses it
                nodes += anchor_sizes.get(event.anchor, 1)
            else:
                continue
            if nodes > MAX_NODES:
                raise ArenaError(f"more than {MAX_NODES:,} values once aliases (*name) are "
                                 "expanded; an arena needs a few hundred", file=source,
                                 line=_line(event), field="yaml")
    except yaml.MarkedYAMLError as error:
        # libyaml >= 0.2.5 refuses 1,000 open brackets itself, while scanning ahead of the
        # events above: the same refusal, so the same message
        if "nesting depth" in (error.problem or "") and error.problem_mark is not None:
            raise ArenaError(_TOO_DEEP, file=source, line=error.problem_mark.line + 1,
                             field="yaml") from None
        return  # the composer reads the text again and reports the error with its line
    except yaml.YAMLError:
        return


def check_count(count: int, limit: int, what: str, *, source: str, line: int | None,
                field: str) -> None:
    """Refuse a list longer than ``limit`` (items in an arena, positions in an item...).

    Raises:
        ArenaError: ``count`` is above ``limit``.

    """
    if count > limit:
        raise ArenaError(f"{count:,} {what}; the limit is {limit:,}", file=source, line=line,
                         field=field)
