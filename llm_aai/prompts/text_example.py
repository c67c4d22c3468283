"""The worked example in words, for the icl prompt under ``--observation text`` or ``both``.

A worked example is recorded as pictures. A run that sends words must show its example in
words too, or the model would learn from pictures and then be tested on text. The example's
scripts are played again in its saved arena with its seed on the embedded simulator, and
after each turn the view is worded as the run words its own (``ObservationMode.describe``:
the same frame of reference, "you see nothing" in a blackout), put before the recorded health
line as the runner puts it. In text mode the pictures are dropped; in ``both`` they stay.

An example made from an episode of a text run already says what was seen, and is sent as
recorded. Otherwise the replay must give the recorded turns (health, reward, steps, events,
end): a replay that differs is another episode, whose words would not match the scripts'
thoughts, and is refused with the turn where it departs.
"""

from __future__ import annotations

import dataclasses
import hashlib

from llm_aai.env import AnimalAIEnv
from llm_aai.logs.events import logged_events
from llm_aai.perception.observer import ObservationMode
from llm_aai.perception.text import EMPTY, NOTHING
from llm_aai.prompts.examples import Example, ExampleError, ExampleTurn
from llm_aai.protocol import PAPER_PROTOCOL, Episode, EpisodeProtocol, ScriptControl

__all__ = ["example_in_words"]

HEALTH_TOLERANCE = 0.05
"""Health shown with one decimal: a replay within this of the record says the same."""


def example_in_words(example: Example, mode: ObservationMode,
                     protocol: EpisodeProtocol = PAPER_PROTOCOL) -> Example:
    """``example`` with each turn's view worded before its text (see the module doc).

    Args:
        example: a loaded worked example with its arena copy.
        mode: the run's observation mode (``text`` or ``both``) and frame of reference.
        protocol: the protocol the example was played under (the paper's).

    Raises:
        ExampleError: the example has no arena copy, or its replay departs from the record.
    """
    if not mode.text:
        return example
    if _worded(example):  # made from a text run's episode: its words are sent verbatim
        return dataclasses.replace(example, rendering={
            "observation": mode.observation, "perspective": mode.perspective,
            "views": "as recorded"})
    if example.arena_path is None:
        raise ExampleError(f"worked example {example.name} has no arena copy, so it cannot be "
                           "shown in words; make it with --arena, or use --observation image")
    views = _replayed_views(example, mode, protocol)
    turns = tuple(dataclasses.replace(
        turn, text=f"{view}\n{turn.text}",
        frames=turn.frames if mode.images else ()) for turn, view in zip(
            example.turns, views, strict=True))
    words = hashlib.sha256("\n\n".join(views).encode("utf-8")).hexdigest()
    return dataclasses.replace(example, turns=turns, rendering={
        "observation": mode.observation, "perspective": mode.perspective, "views_sha256": words})


def _worded(example: Example) -> bool:
    """Whether the example's texts already word the view (it was recorded in words)."""
    return any(line in (NOTHING, EMPTY, "You see:")
               for turn in example.turns for line in turn.text.splitlines())


def _replayed_views(example: Example, mode: ObservationMode,
                    protocol: EpisodeProtocol) -> list[str]:
    """The worded view after each turn of the example, checked against its record."""
    settings = dataclasses.replace(protocol, max_scripts=None, run_out_clock=False)
    control = ScriptControl(str(example.source.get("script_mode", "strict")))
    env = AnimalAIEnv(resolution=64, backend="embedded")
    try:
        episode = Episode(env, settings, control=control)
        start = episode.start(seed=int(example.source.get("seed", 0)),
                              arena=str(example.arena_path), observe_last=False,
                              also_capture=mode.capture(env))
        first = example.turns[0]
        _check(example, first, start.first_observation_health, start.outcome.reward,
               start.outcome.steps, None, None)
        # the words of the instant the last picture shown was taken
        views = [start.views[-1] if start.views else mode.describe(env)]
        for turn in example.turns[1:]:
            if not episode.wants_reply:
                raise ExampleError(f"worked example {example.name}: the replay ended before "
                                   f"turn {turn.turn}")
            played = episode.play(turn.script or "")
            outcome = played.outcome
            events = tuple(event["kind"] for event in logged_events(outcome.infos))
            _check(example, turn, outcome.health, outcome.reward, outcome.steps, events,
                   outcome.done)
            views.append(mode.describe(env))
    finally:
        env.close()
    return views


def _check(example: Example, turn: ExampleTurn, health: float, reward: float, steps: int,
           events: tuple[str, ...] | None, done: bool | None) -> None:
    """Refuse a replayed turn that is not the recorded one."""
    differences = []
    if turn.health is not None and abs(health - turn.health) > HEALTH_TOLERANCE:
        differences.append(f"health {health:.2f}, recorded {turn.health:.2f}")
    if abs(reward - turn.reward) > 1e-3:
        differences.append(f"reward {reward:.4f}, recorded {turn.reward:.4f}")
    if turn.steps and steps != turn.steps:
        differences.append(f"{steps} steps, recorded {turn.steps}")
    if events is not None and events != turn.events:
        differences.append(f"events {list(events)}, recorded {list(turn.events)}")
    if done is not None and done != turn.done:
        differences.append("the episode " + ("ended" if done else "went on")
                           + " where the record says otherwise")
    if differences:
        raise ExampleError(f"worked example {example.name}: turn {turn.turn} does not replay "
                           f"as recorded ({'; '.join(differences)}), so it cannot be shown in "
                           "words; use --observation image")
