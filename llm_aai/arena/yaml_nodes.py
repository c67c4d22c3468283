"""Parse arena YAML safely into records that remember the line of every key and entry.

The loader is a ``yaml.SafeLoader`` subclass: it builds only plain data and the five AAI tags
(``!ArenaConfig``, ``!Arena``, ``!Item``, ``!Vector3``, ``!RGB``), never Python objects, so a
config file cannot run code. Mappings and sequences are built as small records (``Node``,
``Seq``); ``llm_aai.arena.schema`` then turns them into the frozen model, so a wrong value is
reported as ``file:line: field: message``. Before anything is built the text is checked
against the size limits of ``llm_aai.arena.limits``, so no input can exhaust the process.

Untagged mappings are accepted wherever the type is implied by the position (an entry of
``items`` is an ``!Item``), as AAI's YamlDotNet does; a *different* tag there is an error.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

import yaml

from llm_aai.arena.errors import ArenaError
from llm_aai.arena.limits import check_events, check_size

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

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """Build one value, reporting a value YAML's own constructors choke on at its line.

        PyYAML raises a bare ``ValueError`` for some malformed scalars (a date such as
        ``2024-13-45``), which carries no position.
        """
        try:
            return super().construct_object(node, deep=deep)
        except ArenaError:
            raise
        except (ValueError, OverflowError) as exc:
            raise ArenaError(f"cannot read this value: {exc}", file=self.source,
                             line=_line(node), field="yaml") from None


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
        ArenaError: the text is not YAML, holds several documents, uses an unknown tag, or
            is beyond a limit of ``llm_aai.arena.limits``.

    """
    check_size(text, source)
    check_events(text, source, _SafeBase)
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
    except yaml.reader.ReaderError as exc:  # a character YAML forbids: no mark, an offset
        line, column = _reader_location(text, exc.position)
        raise ArenaError(f"not valid YAML: character #x{exc.character:04x} at column {column} "
                         f"({exc.reason}; remove it)", file=source, line=line,
                         field="yaml") from None
    except yaml.YAMLError as exc:
        raise ArenaError(f"not valid YAML: {' '.join(str(exc).split())}", file=source,
                         field="yaml") from None
    finally:
        loader.dispose()


def _reader_location(text: str, position: int) -> tuple[int, int]:
    """Line and column (1-based) of a reader error's offset into ``text``.

    PyYAML's own reader counts characters; libyaml counts bytes of the UTF-8 encoding.
    """
    if _SafeBase is not yaml.SafeLoader:
        before = text.encode("utf-8")[:position].decode("utf-8", "replace")
    else:
        before = text[:position]
    line_start = before.rfind("\n") + 1
    return before.count("\n") + 1, len(before) - line_start + 1
