"""A conversation's context shipped to another machine: the earlier frames travel as bytes."""

from __future__ import annotations

import pickle
import shutil

import pytest

from llm_aai.agents.base import PriorTurn, TurnInput
from llm_aai.runner.episode import ConversationContext
from llm_aai.runner.shipped_context import ShippedContext


def _context(episodes_dir) -> ConversationContext:
    frames = episodes_dir / "01-04-03_t1" / "frames"
    frames.mkdir(parents=True)
    paths = []
    for index, data in enumerate((b"\xff\xd8first", b"\xff\xd8second", b"\xff\xd8third")):
        paths.append(frames / f"001_{index}.jpg")
        paths[-1].write_bytes(data)
    earlier = (PriorTurn(TurnInput((), "Health: 1.0", "Observation captured.", paths[:2]),
                         "Turn(30);"),
               PriorTurn(TurnInput((), "Health: 0.9", "", paths[2:]), "Go(5);"))
    return ConversationContext("trial-1", 2, 3, earlier, "Level 1 done: passed.")


def test_a_context_unpacked_elsewhere_names_the_same_frames_there(tmp_path):
    episodes_dir = tmp_path / "run" / "episodes"
    context = _context(episodes_dir)
    originals = [path.read_bytes() for prior in context.earlier for path in prior.turn.image_paths]
    shipped = pickle.loads(pickle.dumps(ShippedContext.pack(context, episodes_dir)))
    shutil.rmtree(tmp_path / "run")  # the worker's node cannot see the driver's disk
    assert shipped.size_bytes == sum(map(len, originals))

    unpacked = shipped.unpack(tmp_path / "scratch")

    paths = [path for prior in unpacked.earlier for path in prior.turn.image_paths]
    assert [path.read_bytes() for path in paths] == originals
    assert paths[0] == tmp_path / "scratch" / "01-04-03_t1" / "frames" / "001_0.jpg"
    assert [(p.turn.text, p.turn.preamble, p.reply) for p in unpacked.earlier] == \
        [(p.turn.text, p.turn.preamble, p.reply) for p in context.earlier]
    assert (unpacked.conversation, unpacked.position, unpacked.count, unpacked.opening) == \
        ("trial-1", 2, 3, "Level 1 done: passed.")


def test_a_frame_outside_the_runs_episodes_is_refused(tmp_path):
    context = _context(tmp_path / "run" / "episodes")
    refusal = "conversation trial-1: frame .*001_0.jpg is not in the run's episodes folder"
    with pytest.raises(ValueError, match=refusal):
        ShippedContext.pack(context, tmp_path / "other" / "episodes")
