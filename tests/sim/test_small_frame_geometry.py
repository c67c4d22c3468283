"""Coarser render-only geometry below ``SMALL_FRAME``; frames of 128 px and more unchanged.

``LARGE_FRAMES`` was recorded on main (e227b5f) before frames under 128 px were drawn with
coarser curves: the sha256 of every eye frame at 128 and 512 px, and of the 512 px
overview, over four arenas and four poses each.
"""

from __future__ import annotations

import hashlib

import numpy as np

from llm_aai.sim import Simulator
from llm_aai.sim.render import curve_tessellation
from tests.helpers.arenas import arena, obj

SCENES = (
    arena(obj("GoodGoal", (20, 0, 24), (1, 1, 1)), obj("BadGoal", (23, 0, 26), (2, 2, 2))),
    arena(obj("Wall", (22, 0, 24), (2, 2, 1), color=(1, 0, 1)),
          obj("GoodGoalMulti", (17, 0, 25), (1.5, 1.5, 1.5)), yaw=30),
    arena(obj("Cardbox1", (20, 0, 23), (1, 1, 1)), obj("HotZone", (20, 0, 27), (4, 0.5, 4)),
          agent=(5.0, 0.0, 5.0), yaw=45),
    arena(obj("CylinderTunnel", (30, 0, 30), (3, 3, 5)), obj("GoodGoal", (35, 0, 36), (2, 2, 2)),
          agent=(30.0, 0.0, 20.0), yaw=300),
)
ACTIONS = ((1, 0), (1, 1), (0, 2))
"""A pose after each step: with the first view, four poses per arena."""


def frame_hashes(resolution: int, *, overview: bool = False) -> list[str]:
    """sha256 of each frame a ``resolution`` px simulator draws over SCENES and ACTIONS."""
    sim = Simulator(resolution)
    hashes = []
    try:
        for placed in SCENES:
            sim.load(placed, np.random.default_rng(0))
            for k in range(len(ACTIONS) + 1):
                if k:
                    sim.step(*ACTIONS[k - 1])
                frame = sim.render_overview(resolution) if overview else sim.observe()
                hashes.append(hashlib.sha256(frame.tobytes()).hexdigest()[:16])
    finally:
        sim.close()
    return hashes


LARGE_FRAMES = {
    "eye 128": [
        "5a93d30ea7aa6dd7", "8680177196cd9568", "61f788a6ea316b2d", "69b4e4394a070b41",
        "f276abb6956ebe02", "a7a4b3236f2ea39b", "a417f3ee1e08876a", "431d19303934ea5b",
        "5483f9ff2c618cf1", "8a929d9371885c41", "4fae1164f777a3c5", "2b81bc21a7118419",
        "e94dba4a05288083", "5b813c5535f4b1ad", "9bce3177b171e5b8", "83c89f9e4432072a",
    ],
    "eye 512": [
        "ed5d6ee646949806", "f170858613af13cc", "8258d6fd7b64ebbc", "ba58153444a56487",
        "8b5e31cf9077213f", "98b1ebac2ae91e3a", "f566a7d15de07f3d", "7e1b00bb878484b3",
        "9659432bb8642426", "83120c7e6229c066", "881863f451036081", "260c82e8eadc53f7",
        "30f573c28daf108d", "895e7fcf17e42812", "2460b4e7265290e8", "c3e264c367945ce1",
    ],
    "overview 512": [
        "853c5d6452803f23", "8c572e4d66f1ae5b", "92a9cfbe5e70d735", "e324c887b5cd0517",
        "e0b98b8a18f109bd", "eafd5b55771d6ecf", "4d02ec742311dc3f", "5f80f0834662c9b8",
        "d3399839e9e8d732", "a265f1b64d72c8e9", "da6699828034f0fb", "9420a369efefca0e",
        "56bba15ed7e07982", "53bf765b2e51d322", "7bef4ff96124d728", "d7eb42422cfd5a31",
    ],
}


def test_frames_of_128_px_and_more_are_drawn_as_on_main():
    assert frame_hashes(128) == LARGE_FRAMES["eye 128"]
    assert frame_hashes(512) == LARGE_FRAMES["eye 512"]
    assert frame_hashes(512, overview=True) == LARGE_FRAMES["overview 512"]


def test_small_frames_draw_coarser_curves_and_change_few_pixels():
    sim = Simulator(84)
    try:
        sim.load(SCENES[1], np.random.default_rng(0))
        quality = sim._model.vis.quality
        assert (quality.numslices, quality.numstacks) == curve_tessellation(84) == (16, 8)
        coarse = sim.observe()
        # the same state drawn with MuJoCo's default meshes, as main drew every frame
        quality.numslices, quality.numstacks = 28, 16
        sim._renderer._make_context()
        fine = sim.observe()
    finally:
        sim.close()
    changed = (coarse != fine).any(axis=2)
    assert 0 < changed.sum() < 0.02 * changed.size  # the goal's outline and the sky's shading


def test_the_coarser_meshes_leave_the_physics_as_it_was():
    drawn, undrawn = Simulator(84), Simulator(render=False)
    try:
        for sim in (drawn, undrawn):
            sim.load(SCENES[1], np.random.default_rng(0))
            for move, turn in ACTIONS * 3:
                sim.step(move, turn)
                if sim is drawn:
                    sim.observe()
        assert drawn._data.qpos.tobytes() == undrawn._data.qpos.tobytes()
        assert drawn._model.geom_size.tobytes() == undrawn._model.geom_size.tobytes()
    finally:
        drawn.close()
        undrawn.close()
