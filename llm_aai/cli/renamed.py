"""Old spellings of renamed flags and choices, still accepted with a one-line note.

Issue 34 gave each word one meaning (docs/glossary.md): a flag or a choice that used a word
in a second sense was renamed. A command written before keeps working: the old spelling sets
the same setting, and a note on stderr gives the new one, so scripts can be updated at
leisure. The notes go to stderr, never into a run's files.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["OldFlagNoted", "old_choices_noted"]


class OldFlagNoted(argparse.Action):
    """Stores a flag's value as ``store`` does; given by an old name, says the new one.

    Use as ``add_argument("--new", "--old", action=OldFlagNoted, old=("--old",), ...)``:
    the first option string is the current name (help and errors use it).
    """

    def __init__(self, option_strings: list[str], dest: str, *, old: tuple[str, ...],
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.old = frozenset(old)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        """Set the value; note on stderr when the flag was given by an old name."""
        if option_string in self.old:
            print(f"note: {option_string} is deprecated; use {self.option_strings[0]}",
                  file=sys.stderr)
        setattr(namespace, self.dest, values)


def old_choices_noted(flag: str, renamed: Mapping[str, str]) -> Callable[[str], str]:
    """An argparse ``type`` that reads a choice's old spelling as its new one, with a note."""
    def parse(text: str) -> str:
        if text in renamed:
            print(f"note: {flag} {text} is deprecated; use {flag} {renamed[text]}",
                  file=sys.stderr)
            return renamed[text]
        return text
    return parse
