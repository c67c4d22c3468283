"""Validation on the real placer and simulator: broken candidates are rejected, good ones kept."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from llm_aai.arena import RGB, Arena, ArenaConfig, Item, Vector3, dump_config, place_arena
from llm_aai.env.animalai_env import world_seed
from llm_aai.variants import transforms
from llm_aai.variants.validation import (
    DROPPED,
    DUPLICATE,
    HEURISTIC,
    PARENT_UNSOLVED,
    HeuristicParity,
    Rejected,
    ValidationSettings,
    Validator,
    Verdict,
    placed_checksum,
    placed_keys,
)

GREY = RGB(153, 153, 153)


def wall(x: float, z: float, sx: float, sz: float) -> Item:
    return Item("Wall", positions=(Vector3(x, 0, z),), rotations=(0,),
                sizes=(Vector3(sx, 3, sz),), colors=(GREY,))


def gap_arena(gap: float) -> Arena:
    """A wall across the arena at z = 20 with a gap of ``gap`` m at x = 16, food behind it."""
    left, right = 16 - gap / 2, 24 - gap / 2
    return Arena(time_limit=250, pass_mark=0, items=(
        Item("Agent", positions=(Vector3(16, 0, 10),), rotations=(0,)),
        wall(left / 2, 20, left, 1), wall(40 - right / 2, 20, right, 1),
        Item("GoodGoal", positions=(Vector3(16, 0, 30),), sizes=(Vector3(1, 1, 1),))))


def close_the_gap(arena: Arena) -> Arena:
    """A deliberately broken transformation: widens both walls until they meet at x = 16."""
    items = list(arena.items)
    items[1], items[2] = wall(8, 20, 16, 1), wall(28, 20, 24, 1)
    return dataclasses.replace(arena, items=tuple(items))


def write(arena: Arena, path: Path) -> Path:
    path.write_text(dump_config(ArenaConfig(arenas=((0, arena),))), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def validator():
    checker = Validator(ValidationSettings(seeds=1, budget=4000))
    yield checker
    checker.close()


@pytest.mark.slow
def test_a_transformation_that_closes_a_gap_is_rejected(tmp_path, validator):
    parent = gap_arena(3.0)
    verdict = validator.judge_parent(parent, write(parent, tmp_path / "parent.yaml"), 0.0)
    assert verdict.oracle_rewards[0] > 0  # through the gap to the food
    broken = close_the_gap(parent)
    with pytest.raises(Rejected) as caught:
        validator.judge_variant(broken, write(broken, tmp_path / "broken.yaml"), 0.0, verdict,
                                {verdict.checksum})
    assert verdict.heuristic == (True, True, True)  # the heuristic walks through the gap
    # with the gap closed it fails: two failures of 3 seeds already differ by 2, so the check
    # stops there and rejects, before the oracle is asked
    assert caught.value.reason == HEURISTIC
    assert caught.value.detail.startswith("parent PPP, variant FF-")
    placed = place_arena(broken, np.random.default_rng(0))
    assert max(validator.oracle_rewards([placed], 0.0)) < 0  # no way round: nothing eaten
    # the same task mirrored is kept: same gap, same food, seen from the other side
    mirrored = transforms.mirror(parent)
    kept = validator.judge_variant(mirrored, write(mirrored, tmp_path / "mirrored.yaml"), 0.0,
                                   verdict, {verdict.checksum})
    assert kept.checksum != verdict.checksum
    assert kept.heuristic == (True, True)  # 2 of 3 passes: within 1 of 3 whatever the third


def placement_only(arena: Arena) -> Verdict:
    """A parent's verdict from its placement alone (no episode: the checks must not need one)."""
    placed = place_arena(arena, np.random.default_rng(world_seed(1)))
    return Verdict(placed_checksum(placed), (placed_keys(placed),), (False, False, False), ())


def test_a_copy_of_the_parent_is_rejected_before_any_episode(tmp_path, validator):
    parent = gap_arena(3.0)
    verdict = placement_only(parent)
    with pytest.raises(Rejected) as caught:
        validator.judge_variant(parent, write(parent, tmp_path / "copy.yaml"), 0.0, verdict,
                                {verdict.checksum})
    assert caught.value.reason == DUPLICATE


def test_an_object_that_no_longer_fits_is_rejected(tmp_path, validator):
    parent = dataclasses.replace(gap_arena(3.0), items=(*gap_arena(3.0).items,
                                                        wall(5, 30, 2, 1)))
    moved = dataclasses.replace(parent, items=(*parent.items[:4], wall(5, 20, 2, 1)))  # into
    with pytest.raises(Rejected) as caught:  # the wall across the arena: no room there
        validator.judge_variant(moved, write(moved, tmp_path / "moved.yaml"), 0.0,
                                placement_only(parent), set())
    assert caught.value.reason == DROPPED
    assert "no free spot" in caught.value.detail


def test_an_object_the_parent_drops_too_is_no_reason_to_reject(tmp_path, validator):
    """Some testbed files lay a wall into another (AAI drops it too): that is the task."""
    parent = dataclasses.replace(gap_arena(3.0), items=(*gap_arena(3.0).items,
                                                        wall(5, 20, 2, 1)))
    verdict = placement_only(parent)
    mirrored = transforms.mirror(parent)
    with pytest.raises(Rejected) as caught:  # it gets past placement to the episodes
        validator.judge_variant(mirrored, write(mirrored, tmp_path / "mirrored.yaml"), 0.0,
                                verdict, {verdict.checksum})
    assert caught.value.reason == HEURISTIC  # the stand-in verdict: failed on all 3 seeds


def test_placed_checksum_tells_a_mirror_image_from_the_original():
    parent = gap_arena(3.0)
    turned = transforms.rotate(transforms.rotate(parent, 1), 3)
    one = placed_checksum(place_arena(parent, np.random.default_rng(0)))
    assert placed_checksum(place_arena(turned, np.random.default_rng(0))) == one
    mirrored = transforms.mirror(parent)
    assert placed_checksum(place_arena(mirrored, np.random.default_rng(0))) != one


@pytest.mark.parametrize("parent, variant, agrees, decided", [
    (3, (True, True), True, True),  # 2 or 3 of 3 against 3: within 1 either way
    (3, (True, False), False, False),  # 1 or 2: the third seed decides
    (3, (True, False, False), False, True),
    (3, (False, False), False, True),  # at most 1 against 3: a detour closed
    (0, (True, True), False, True),  # a task failed on every seed made easy
    (0, (False, False), True, True),
    (1, (False, True, True), True, True),  # a mirror's coin: 1 against 2 is the same task
    (1, (True, True, True), False, True),
    (2, (False,), False, False),
])
def test_heuristic_parity_compares_pass_counts_within_one(parent, variant, agrees, decided):
    parity = HeuristicParity(target=parent, seeds=3, tolerance=1)
    assert parity.agrees(variant) is agrees
    assert parity.decided(variant) is decided


def test_heuristic_parity_settings_that_could_never_reject_are_refused():
    with pytest.raises(ValueError, match="could never reject"):
        ValidationSettings(heuristic_seeds=2, heuristic_tolerance=2)


def bridge_arena() -> Arena:
    """A 0.1 m wall laid across a band of death zone, food beyond it (testbed 04-22's trap):
    in the 3.x build the agent on the bridge sinks into the trigger and dies, in the 2019
    build (zones end at the floor) it crosses."""
    return Arena(time_limit=500, pass_mark=0, items=(
        Item("Agent", positions=(Vector3(20, 0, 4),), rotations=(0,)),
        Item("DeathZone", positions=(Vector3(20, 0, 20),), rotations=(0,),
             sizes=(Vector3(40, 0.5, 20),)),
        Item("Wall", positions=(Vector3(20, 0, 20),), rotations=(0,),
             sizes=(Vector3(4, 0.1, 22),), colors=(GREY,)),
        Item("GoodGoal", positions=(Vector3(20, 0, 36),), sizes=(Vector3(1, 1, 1),))))


@pytest.mark.slow
def test_a_parent_solved_only_in_the_2019_build_is_validated_there(tmp_path):
    parent = bridge_arena()
    path = write(parent, tmp_path / "bridge.yaml")
    only_3x = Validator(ValidationSettings(seeds=1, budget=4000, physics_builds=("3.x",)))
    try:
        with pytest.raises(Rejected) as caught:
            only_3x.judge_parent(parent, path, 0.0)
    finally:
        only_3x.close()
    assert caught.value.reason == PARENT_UNSOLVED
    assert caught.value.detail.startswith("oracle returns 3.x build -")
    both = Validator(ValidationSettings(seeds=1, budget=4000))
    try:
        verdict = both.judge_parent(parent, path, 0.0)
        assert verdict.physics_build == "2019" and verdict.oracle_rewards[0] > 0
        turned = transforms.rotate(parent, 2)  # (the mirror image is the arena itself)
        kept = both.judge_variant(turned, write(turned, tmp_path / "turned.yaml"), 0.0,
                                  verdict, {verdict.checksum})
    finally:
        both.close()
    assert kept.physics_build == "2019" and kept.oracle_rewards[0] > 0


@pytest.mark.parametrize("builds", [(), ("3.x", "3.x"), ("4.x",)])
def test_validation_builds_must_be_known_and_distinct(builds):
    with pytest.raises(ValueError, match="physics_builds"):
        ValidationSettings(physics_builds=builds)
