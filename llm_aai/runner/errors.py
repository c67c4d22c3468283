"""The errors a run raises to its user.

Every check before a run starts, and every stop during one, ends in a ``RunError`` whose
message says what to fix (the command line prints it as one line). They have a module of their
own so that each part of the run library can raise them without importing the others.
"""

from __future__ import annotations


class RunError(Exception):
    """A problem the user can fix (bad task list, missing key, missing arenas...)."""


class RunInterrupted(RunError):
    """Ctrl-C: finished episodes are kept, the ones in flight are rerun on resume."""
