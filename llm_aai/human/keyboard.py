"""The children's interface: arrow keys held down, read as one AAI action per step in real time.

AAI's step is 0.06 s of game time (3 physics steps of 0.02 s), so in real time the world takes
one step every ``TICK_S`` whatever the player does: the held keys' action, or none. A key
pressed acts at once rather than at the next tick, but never sooner than ``MIN_GAP_S`` after
the last step, so a flood of key presses cannot run the world faster than a few times real
time. The clock of a level starts at its first key press and pauses while no page is connected
(a closed tab or a reload), so neither a participant reading the instructions nor one who lost
the connection loses health to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from llm_aai.protocol.action_control import action_reply

__all__ = ["KEYS", "MIN_GAP_S", "TICK_S", "KeyboardClock", "action_of"]

TICK_S = 0.06
"""One AAI step of game time."""

MIN_GAP_S = 0.02
"""The least time between two steps (a key press acts at once, but not sooner than this)."""

KEYS = ("ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight")
"""The keys read, by their DOM ``KeyboardEvent.key`` names."""


def action_of(held: Iterable[str]) -> tuple[int, int]:
    """AAI's ``(move, turn)`` for the arrow keys held (opposite keys cancel)."""
    keys = set(held)
    up, down = "ArrowUp" in keys, "ArrowDown" in keys
    left, right = "ArrowLeft" in keys, "ArrowRight" in keys
    move = 1 if up and not down else 2 if down and not up else 0
    turn = 1 if right and not left else 2 if left and not right else 0
    return move, turn


class KeyboardClock:
    """Says when the next step is due and which action it takes, from the keys a page sends.

    Called from two threads: the page's connection sets the keys (``press``) and whether a
    page is there (``connect``/``disconnect``); the episode's thread waits in ``next_reply``.

    Args:
        clock: seconds, monotonic (a test may give its own).

    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._changed = threading.Condition()
        self._held: frozenset[str] = frozenset()
        self._pressed = False
        self._tapped: frozenset[str] = frozenset()
        self._sequence = 0
        self._applied = 0
        self._connections = 0
        self._started = False
        self._last_step = 0.0
        self._closed: str | None = None

    def press(self, held: Iterable[str], sequence: int) -> None:
        """The page's keys now (``sequence`` numbers the page's key events, for its timing)."""
        keys = frozenset(key for key in held if key in KEYS)
        with self._changed:
            new = keys - self._held
            self._pressed = self._pressed or bool(new)
            self._tapped |= new  # a key pressed and let go between two steps still acts
            self._held = keys
            self._sequence = max(self._sequence, sequence)
            if keys:
                self._started = True
            self._changed.notify_all()

    def connect(self) -> None:
        """A page is connected: the clock runs (once the level's first key was pressed)."""
        with self._changed:
            self._connections += 1
            self._changed.notify_all()

    def disconnect(self) -> None:
        """A page went away: its keys are released and, with no page left, the clock pauses."""
        with self._changed:
            self._connections = max(0, self._connections - 1)
            if not self._connections:
                self._held = frozenset()
            self._changed.notify_all()

    def new_level(self) -> None:
        """The next level waits for its first key press."""
        with self._changed:
            self._started = False
            self._pressed = False
            self._tapped = frozenset()
            self._held = frozenset()

    def close(self, reason: str) -> None:
        """Stop waiting: ``next_reply`` raises ``EOFError`` with ``reason``."""
        with self._changed:
            self._closed = reason
            self._changed.notify_all()

    @property
    def connected(self) -> bool:
        """Whether a page is connected now."""
        return self._connections > 0

    @property
    def applied(self) -> int:
        """The sequence number of the last key event the last step acted on."""
        return self._applied

    def next_reply(self) -> str:
        """Wait until the next step is due and return its frame-control reply.

        Raises:
            EOFError: the clock was closed (the server stops, the session ends).

        """
        with self._changed:
            while True:
                if self._closed is not None:
                    raise EOFError(self._closed)
                now = self._clock()
                if not (self._started and self._connections):
                    self._changed.wait()
                    continue
                due = self._last_step + TICK_S
                if self._pressed:
                    due = min(due, self._last_step + MIN_GAP_S)
                if now >= due:
                    break
                self._changed.wait(due - now)
            action = action_of(self._held | self._tapped)
            self._last_step = now
            self._pressed = False
            self._tapped = frozenset()
            self._applied = self._sequence
            return action_reply(action)
