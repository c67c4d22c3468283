"""The scene's names for objects: a ``Wall`` item is called by its shape, as a person would."""

from __future__ import annotations

import pytest

from llm_aai.env import AnimalAIEnv
from llm_aai.grounding import TurnTruth, extract, probe, verify
from llm_aai.grounding.scene import block_shaped
from tests.helpers.arenas import goal_ahead


def _wall(x: float, z: float, size: tuple[float, float, float]) -> str:
    sx, sy, sz = size
    return f"""    - !Item
      name: Wall
      positions:
      - !Vector3 {{x: {x}, y: 0, z: {z}}}
      rotations: [0]
      sizes:
      - !Vector3 {{x: {sx}, y: {sy}, z: {sz}}}
      colors:
      - !RGB {{r: 153, g: 153, b: 153}}
"""


# the agent at (20, 10) facing +z: a 1.5 m grey cube ahead on its left, a long thin grey wall
# on its right, the green ball straight ahead
ARENA = goal_ahead(goal=(20, 30)) + _wall(16, 16, (1.5, 1.5, 1.5)) + _wall(25, 18, (0.5, 2, 8))


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    arena = tmp_path_factory.mktemp("scene") / "arena.yaml"
    arena.write_text(ARENA)
    env = AnimalAIEnv(resolution=64)
    try:
        env.reset(seed=0, options={"arena": str(arena)})
        return probe(env.backend)
    finally:
        env.close()


def test_a_cube_of_wall_is_a_block_and_a_long_one_a_wall(scene):
    walls = sorted((o for o in scene.objects if o.type != "ball"), key=lambda o: o.bearing)
    assert [(o.noun, o.type, o.also, o.visible) for o in walls] == [
        ("grey block", "box", ("wall",), True), ("grey wall", "wall", (), True)]
    assert walls[0].bearing < 0 < walls[1].bearing


@pytest.mark.parametrize(("think", "verdicts"), [
    ("There is a grey block to my left", ["true", "true"]),  # #51: was false, false
    ("I see a grey cube on my left, about 7 m away", ["true", "true", "true"]),
    ("I see a grey block on my right", ["true", "false"]),  # seen (on the left), not there
    ("I see a grey wall on my right", ["true", "true"]),
    ("There is no box on my right", ["true"]),  # the long wall is no box
    ("There is no wall on my left", ["false"]),  # the text observation calls the cube a wall
])
def test_claims_name_wall_items_by_their_shape(scene, think, verdicts):
    assert [verify(c, TurnTruth(scene)).verdict for c in extract(think)] == verdicts


@pytest.mark.parametrize(("size", "block"), [
    ((1.5, 1.5, 1.5), True), ((1, 1, 2), True), ((0.3, 1, 1.4), True),  # cube, brick, small
    ((10, 0.5, 10), True), ((1, 5, 1), True),  # a platform, a pillar: no long side
    ((0.5, 2, 8), False), ((20, 3, 1), False), ((3, 5, 1), False),  # long and thin
])
def test_block_or_wall_by_the_sides_on_the_ground(size, block):
    assert block_shaped(size) is block
