"""The keyboard's real-time clock: one action a step, taps kept, paused until played."""

from __future__ import annotations

import threading
import time

import pytest

from llm_aai.human.keyboard import MIN_GAP_S, TICK_S, KeyboardClock, action_of


def test_arrow_keys_map_to_aai_actions_and_opposites_cancel():
    assert action_of([]) == (0, 0)
    assert action_of(["ArrowUp"]) == (1, 0)
    assert action_of(["ArrowDown", "ArrowRight"]) == (2, 1)
    assert action_of(["ArrowUp", "ArrowLeft"]) == (1, 2)
    assert action_of(["ArrowUp", "ArrowDown", "ArrowLeft"]) == (0, 2)


def _clock() -> KeyboardClock:
    clock = KeyboardClock()
    clock.connect()
    return clock


def test_a_key_acts_at_once_and_then_every_tick():
    clock = _clock()
    clock.press(["ArrowUp"], 1)
    started = time.monotonic()
    assert clock.next_reply() == "forward"
    assert time.monotonic() - started < TICK_S / 2  # a press does not wait for the tick
    assert clock.applied == 1
    assert clock.next_reply() == "forward"  # still held: the next tick
    clock.press([], 2)
    assert clock.next_reply() == "stay"  # real time: the world steps with no key
    assert time.monotonic() - started >= 2 * TICK_S - 0.01


def test_a_tap_between_two_steps_still_acts_once():
    clock = _clock()
    clock.press(["ArrowLeft"], 1)
    clock.next_reply()
    clock.press(["ArrowRight"], 2)
    clock.press([], 3)  # let go before the step
    assert clock.next_reply() == "right"
    assert clock.next_reply() == "stay"


def test_a_flood_of_presses_steps_no_faster_than_the_least_gap():
    clock = _clock()
    started = time.monotonic()
    for sequence in range(10):
        clock.press(["ArrowUp"] if sequence % 2 else ["ArrowDown"], sequence)
        clock.press([], sequence)
        clock.next_reply()
    assert time.monotonic() - started >= 9 * MIN_GAP_S - 0.01


def _waits(clock: KeyboardClock, seconds: float) -> bool:
    """Whether ``next_reply`` is still waiting after ``seconds``."""
    done = threading.Event()

    def step() -> None:
        try:
            clock.next_reply()
        except EOFError:  # closed while waiting: the thread ends
            return
        done.set()

    threading.Thread(target=step, daemon=True).start()
    return not done.wait(seconds)


def test_the_clock_waits_for_the_first_key_and_for_a_page():
    clock = KeyboardClock()
    clock.connect()
    assert _waits(clock, 0.2)  # the level has not started
    clock.press(["ArrowUp"], 1)  # starts it: the waiting step is taken
    time.sleep(0.1)
    clock.disconnect()  # the tab closed: keys released, the clock pauses
    assert _waits(clock, 0.3)
    clock.close("the server stopped")
    with pytest.raises(EOFError, match="the server stopped"):
        clock.next_reply()
