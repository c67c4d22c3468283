"""Each transformation on hand-made arenas with known results, and its geometry on real ones."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from shapely import affinity

from llm_aai.arena import RGB, Arena, Item, Vector3, load_config
from llm_aai.arena.catalog import children_subset
from llm_aai.variants import transforms
from llm_aai.variants.geometry import fixed_objects, gap_bands
from llm_aai.variants.transforms import NotApplicable


def arena_of(*items: Item) -> Arena:
    return Arena(time_limit=250, items=items)


def agent(x=20.0, z=2.0, rotation=0.0) -> Item:
    return Item("Agent", positions=(Vector3(x, 0, z),), rotations=(rotation,))


def wall(x, z, sx, sz, rotation=0.0, colour=(153, 153, 153), name="Wall") -> Item:
    return Item(name, positions=(Vector3(x, 0, z),), rotations=(rotation,),
                sizes=(Vector3(sx, 2, sz),), colors=(RGB(*colour),))


def ball(x, z, name="GoodGoal", size=1.0) -> Item:
    return Item(name, positions=(Vector3(x, 0, z),), sizes=(Vector3(size, size, size),))


def first(arena: Arena, name: str) -> Item:
    return next(item for item in arena.items if item.name == name)


# -- known results ---------------------------------------------------------------------------


def test_mirror_reflects_x_and_rotations_and_turns_l_into_j():
    arena = arena_of(agent(20, 2, 30), wall(5, 10, 4, 1, 30),
                     Item("LObject", positions=(Vector3(10, 0, 10),), rotations=(0,),
                          sizes=(Vector3(2, 1, 6),)),
                     Item("UObject", positions=(Vector3(30, 0, 30),), rotations=(40,),
                          sizes=(Vector3(2, 1, 6),)))
    mirrored = transforms.mirror(arena)
    assert first(mirrored, "Wall").positions[0].as_tuple() == (35, 0, 10)
    assert first(mirrored, "Wall").rotations == (330,)
    assert first(mirrored, "Agent").rotations == (330,)
    j_block = first(mirrored, "LObject2")  # the L block's mirror image is the J block
    assert j_block.positions[0].x == 30
    assert j_block.rotations == (180,)  # placed yaw 90 -> -90, less the prefab's 90
    assert first(mirrored, "UObject").rotations == (320,)  # symmetric along its own z


def test_quarter_turn_maps_x_z_to_z_40_minus_x_and_adds_90_degrees():
    arena = arena_of(agent(20, 2, 0), wall(5, 10, 4, 1, 300))
    turned = transforms.rotate(arena, 1)
    assert first(turned, "Wall").positions[0].as_tuple() == (10, 0, 35)
    assert first(turned, "Wall").rotations == (30,)
    assert first(turned, "Agent").positions[0].as_tuple() == (2, 0, 20)


def test_random_values_stay_random():
    arena = arena_of(Item("GoodGoal", positions=(Vector3(-1, 0, 12),)),
                     Item("Wall", positions=(Vector3(8, 0, -1),), rotations=(-1,)))
    turned = transforms.rotate(transforms.mirror(arena), 1)
    assert first(turned, "GoodGoal").positions[0].as_tuple() == (12, 0, -1)
    assert first(turned, "Wall").positions[0].as_tuple() == (-1, 0, 8)
    assert first(turned, "Wall").rotations == (-1,)


def test_recolour_changes_walls_only_and_keeps_shared_colours_shared():
    arena = arena_of(agent(), wall(5, 10, 4, 1), wall(15, 10, 4, 1),
                     wall(25, 10, 4, 1, colour=(0, 0, 255)),
                     Item("Ramp", positions=(Vector3(10, 0, 30),), rotations=(0,),
                          sizes=(Vector3(2, 1, 4),), colors=(RGB(255, 0, 255),)),
                     ball(30, 30))
    recoloured = transforms.recolour_walls(arena, random.Random(3))
    walls = [item.colors[0].as_tuple() for item in recoloured.items if item.name == "Wall"]
    assert walls[0] == walls[1] != walls[2]
    assert set(walls) <= set(transforms.WALL_PALETTE)
    assert first(recoloured, "Ramp") == first(arena, "Ramp")
    assert first(recoloured, "GoodGoal") == first(arena, "GoodGoal")


def test_recolour_without_coloured_walls_does_not_apply():
    with pytest.raises(NotApplicable, match="no wall"):
        transforms.recolour_walls(arena_of(agent(), ball(30, 30)), random.Random(0))


def test_translation_refused_when_a_wall_spans_the_arena():
    # a wall from fence to fence splits the arena: any shift in x opens a gap at one end
    arena = arena_of(agent(20, 2), wall(20, 20, 40, 1), ball(20, 35))
    with pytest.raises(NotApplicable):
        transforms.translate(arena, 1.0, 0.0)
    shifted = transforms.translate(arena, 0.0, 2.0)  # along z the fence gaps stay open
    assert first(shifted, "Wall").positions[0].z == 22


def test_translation_keeps_a_corridor_along_the_fence_as_narrow_as_it_was():
    arena = arena_of(agent(20, 2), wall(20.5, 20, 39, 1), ball(20, 35))  # 0.5 m gap at x=0
    with pytest.raises(NotApplicable, match="gap"):
        transforms.translate(arena, -0.6, 0.0)  # would close the narrow gap: refused
    with pytest.raises(NotApplicable, match="gap"):
        transforms.translate(arena, 0.6, 0.0)  # would open it to 1.1 m: passable, refused


def test_jitter_keeps_every_gap_band_and_leaves_touching_objects_alone():
    arena = arena_of(agent(20, 2), wall(10, 20, 4, 1), wall(12.5, 20, 1, 1),  # touching pair
                     wall(30, 20, 4, 1), ball(30, 30))
    jittered = transforms.jitter(arena, random.Random(5))
    assert gap_bands(fixed_objects(jittered)) == gap_bands(fixed_objects(arena))
    assert jittered.items[1] == arena.items[1] and jittered.items[2] == arena.items[2]
    assert jittered != arena


def test_jitter_refused_when_everything_touches():
    arena = arena_of(Item("Agent"), wall(10, 20, 4, 1), wall(12.5, 20, 1, 1))
    with pytest.raises(NotApplicable):
        transforms.jitter(arena, random.Random(0))


def test_swap_sides_swaps_the_balls_of_a_symmetric_choice():
    # a Y choice: a wall along the agent's line, food on the left, danger on the right
    arena = arena_of(agent(20, 2, 0), wall(20, 25, 1, 20), ball(15, 35),
                     ball(25, 35, name="BadGoal"))
    swapped = transforms.swap_sides(arena)
    assert first(swapped, "GoodGoal").positions[0].x == 25
    assert first(swapped, "BadGoal").positions[0].x == 15
    assert first(swapped, "Wall") == first(arena, "Wall")


def test_swap_sides_refused_for_an_asymmetric_layout_or_a_random_start():
    lopsided = arena_of(agent(20, 2, 0), wall(17, 25, 1, 20), ball(15, 35))
    with pytest.raises(NotApplicable, match="not symmetric"):
        transforms.swap_sides(lopsided)
    with pytest.raises(NotApplicable, match="random"):
        transforms.swap_sides(arena_of(Item("Agent"), ball(15, 35)))


# -- properties ------------------------------------------------------------------------------

coordinate = st.one_of(st.just(-1.0), st.floats(0, 40).map(lambda v: round(v, 3)))
rotation = st.one_of(st.just(-1.0), st.floats(0, 359.9).map(lambda v: round(v, 3)))
names = st.sampled_from(["Wall", "Ramp", "GoodGoal", "BadGoal", "Cardbox1", "UObject",
                         "LObject", "LObject2", "CylinderTunnel", "HotZone"])


@st.composite
def arenas(draw) -> Arena:
    items = []
    for _ in range(draw(st.integers(1, 6))):
        count = draw(st.integers(1, 3))
        items.append(Item(
            draw(names),
            positions=tuple(Vector3(draw(coordinate), 0, draw(coordinate))
                            for _ in range(count)),
            rotations=tuple(draw(rotation) for _ in range(draw(st.integers(0, count)))),
            sizes=tuple(Vector3(2, 1, 3) for _ in range(count))))
    return arena_of(*items)


@settings(max_examples=150, deadline=None)
@given(arenas())
def test_mirror_twice_is_the_identity(arena):
    assert transforms.mirror(transforms.mirror(arena)) == arena


@settings(max_examples=150, deadline=None)
@given(arenas(), st.integers(0, 3))
def test_four_quarter_turns_are_the_identity(arena, turns):
    assert transforms.rotate(arena, 4) == arena
    assert transforms.rotate(transforms.rotate(arena, turns), 4 - turns) == arena


@settings(max_examples=150, deadline=None)
@given(arenas(), st.integers(0, 3), st.booleans())
def test_every_fixed_coordinate_stays_on_the_floor(arena, turns, mirrored):
    changed = transforms.rotate(arena, turns)
    changed = transforms.mirror(changed) if mirrored else changed
    for item in changed.items:
        for p in item.positions:
            for value in (p.x, p.z):
                assert value == -1 or 0 <= value <= 40
        assert all(r == -1 or 0 <= r < 360 for r in item.rotations)


@settings(max_examples=80, deadline=None)
@given(arenas(), st.integers(0, 3), st.booleans())
def test_objects_inside_the_fence_stay_inside_it(arena, turns, mirrored):
    changed = transforms.rotate(arena, turns)
    changed = transforms.mirror(changed) if mirrored else changed
    try:
        before, after = _shapes(arena), _shapes(changed)
    except NotApplicable:  # a crowded draw: the randomly placed agent finds no room
        assume(False)
    for key, shape in before.items():
        min_x, min_z, max_x, max_z = shape.bounds
        # (an object the placer dropped on one side, for a random neighbour, is not compared)
        if min(min_x, min_z) >= 0 and max(max_x, max_z) <= 40 and key in after:
            low_x, low_z, high_x, high_z = after[key].bounds
            assert min(low_x, low_z) >= -1e-6 and max(high_x, high_z) <= 40 + 1e-6


def _shapes(arena: Arena) -> dict:
    return {(f.item_index, f.instance_index): f.shape for f in fixed_objects(arena)}


def _pair_bands(arena: Arena) -> dict:
    """The bands of the gaps between objects (the fence's sides swap under a symmetry)."""
    return {key: value for key, value in gap_bands(fixed_objects(arena)).items()
            if isinstance(key[1], tuple)}


@pytest.mark.parametrize("task", [t.task_id for t in children_subset()])
def test_transformed_footprints_are_the_footprints_transformed(testbed_dir, task):
    """On the real children arenas: every fixed object lands where the symmetry puts it."""
    arena = load_config(testbed_dir / f"{task}.yaml").arena()
    before = _shapes(arena)
    mirrored, turned = _shapes(transforms.mirror(arena)), _shapes(transforms.rotate(arena, 1))
    assert mirrored.keys() == turned.keys() == before.keys()
    for key, shape in before.items():
        tolerance = 1e-3 * max(shape.area, 1e-3)
        expected = affinity.scale(shape, xfact=-1, origin=(20, 20))
        assert mirrored[key].symmetric_difference(expected).area < tolerance
        expected = affinity.rotate(shape, -90, origin=(20, 20))
        assert turned[key].symmetric_difference(expected).area < tolerance
    assert _pair_bands(transforms.mirror(arena)) == _pair_bands(arena)
