"""The eye's ray-cast view: what it lists is what the camera would show."""

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from llm_aai.arena.placement import place_arena
from llm_aai.arena.yaml_io import load_config
from llm_aai.sim import Simulator
from llm_aai.sim.render import shared_gl
from llm_aai.sim.sight import SIGHT_RAYS
from tests.helpers.arenas import arena, obj

CHILDREN = Path(__file__).resolve().parents[2] / "llm_aai" / "data" / "children_subset.csv"


def _seen(sim):
    return {s.obj.spec.name: s for s in sim.look()[1]}


def _expected(sim, target):
    """Ground distance and signed bearing (degrees, + right) from the eye to ``target``."""
    ex, _, ez = sim.state.position
    yaw = math.radians(sim.state.yaw)
    dx, dz = target[0] - ex, target[2] - ez
    forward = dx * math.sin(yaw) + dz * math.cos(yaw)
    right = dx * math.cos(yaw) - dz * math.sin(yaw)
    return math.hypot(dx, dz), math.degrees(math.atan2(right, forward))


@pytest.mark.parametrize(("yaw", "ball"), [(0.0, (23.0, 0.0, 28.0)), (0.0, (16.0, 0.0, 26.0)),
                                           (90.0, (30.0, 0.0, 17.0)), (200.0, (18.0, 0.0, 10.0))])
def test_a_ball_in_view_is_listed_with_its_bearing_side_and_distance(physics_sim, yaw, ball):
    sim = physics_sim(arena(obj("GoodGoal", ball, (1.0, 1.0, 1.0)), yaw=yaw))
    seen = _seen(sim)["GoodGoal"]
    distance, bearing = _expected(sim, (ball[0], 0.5, ball[2]))
    assert abs(seen.distance - distance) <= 0.1 * distance
    assert math.copysign(1, seen.bearing) == math.copysign(1, bearing)
    assert abs(seen.bearing - bearing) < 2.0
    assert abs(seen.elevation) < 2.0  # centre and eye both about 0.5 m above the floor
    assert not seen.behind_glass


def test_a_ball_behind_the_agent_is_not_listed(physics_sim):
    sim = physics_sim(arena(obj("GoodGoal", (20.0, 0.0, 12.0), (1.0, 1.0, 1.0))))
    assert "GoodGoal" not in _seen(sim)


def test_a_ball_behind_an_opaque_wall_is_not_listed_but_the_wall_is(physics_sim):
    sim = physics_sim(arena(obj("Wall", (20.0, 0.0, 25.0), (6.0, 3.0, 0.5)),
                            obj("GoodGoal", (20.0, 0.0, 30.0), (1.0, 1.0, 1.0))))
    seen = _seen(sim)
    assert "GoodGoal" not in seen
    wall = seen["Wall"]
    assert wall.leftmost < -10 and wall.rightmost > 10  # 6 m wide, 4.75 m from the eye
    assert wall.nearest == pytest.approx(4.75, abs=0.1)


def test_a_ball_behind_a_transparent_wall_is_listed_as_seen_through_glass(physics_sim):
    sim = physics_sim(arena(obj("WallTransparent", (20.0, 0.0, 25.0), (6.0, 3.0, 0.5)),
                            obj("GoodGoal", (20.0, 0.0, 30.0), (1.0, 1.0, 1.0))))
    seen = _seen(sim)
    assert seen["GoodGoal"].behind_glass
    assert seen["GoodGoal"].distance == pytest.approx(10.0, rel=0.1)
    assert not seen["WallTransparent"].behind_glass


def test_a_collected_yellow_ball_is_no_longer_seen(physics_sim):
    sim = physics_sim(arena(obj("GoodGoalMulti", (20.0, 0.0, 22.0), (1.0, 1.0, 1.0)),
                            obj("GoodGoalMulti", (23.0, 0.0, 30.0), (1.0, 1.0, 1.0))))
    assert len(sim.look()[1]) == 2
    for _ in range(40):
        if sim.step(1, 0).events and sim.total_reward > 0:
            break
    seen = sim.look()[1]
    assert len(seen) == 1 and seen[0].distance > 5


def test_a_ball_beyond_the_far_plane_is_not_listed(physics_sim):
    sim = physics_sim(arena(obj("GoodGoal", (1.0, 0.0, 39.0), (5.0, 5.0, 5.0)),
                            agent=(39.0, 0.0, 1.0), yaw=-45.0))
    assert sim.sight.far > 50  # the arena's diagonal is 56.6 m: every ball is within it
    assert "GoodGoal" in _seen(sim)


def test_a_simulator_that_has_looked_snapshots_and_restores(physics_sim):
    """The ray caster is how the simulator sees, not world state: a snapshot leaves it alone
    (the oracle snapshots the episode's simulator after the text probe has looked)."""
    sim = physics_sim(arena(obj("GoodGoal", (23.0, 0.0, 28.0), (1.0, 1.0, 1.0))))
    before = _seen(sim)["GoodGoal"].distance
    snapshot = sim.snapshot()
    for _ in range(10):
        sim.step(1, 0)
    assert _seen(sim)["GoodGoal"].distance < before - 1
    sim.restore(snapshot)
    assert _seen(sim)["GoodGoal"].distance == before


def _segmentation(sim, size):
    """Per-pixel placed-object index (-1 for none) of the eye image, drawn by MuJoCo.

    Transparent walls and tunnels are left out of the drawing, as the eye sees through them;
    the sight lists them separately.
    """
    import mujoco

    model, data = sim._model, sim._data
    posed = mujoco.MjData(model)
    posed.qpos[:] = data.qpos
    mujoco.mj_forward(model, posed)
    option = mujoco.MjvOption()
    option.geomgroup[:] = 0
    option.geomgroup[0] = option.geomgroup[1] = 1
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
    camera.fixedcamid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, "eye")
    scene = mujoco.MjvScene(model, maxgeom=model.ngeom + 64)
    mujoco.mjv_updateScene(model, posed, option, None, camera, mujoco.mjtCatBit.mjCAT_ALL, scene)
    owner = np.full(model.ngeom, -1)
    glass = np.zeros(model.ngeom, dtype=bool)
    for geom in range(model.ngeom):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom) or ""
        if name.startswith("obj"):
            owner[geom] = int(name[3:].split("_")[0])
            spec = sim._objects[owner[geom]].spec
            glass[geom] = spec.alpha < 1 and spec.kind in ("wall", "tunnel")
    for k in range(scene.ngeom):
        g = scene.geoms[k]
        if g.objtype == mujoco.mjtObj.mjOBJ_GEOM and glass[g.objid]:
            g.pos[:] = (1e4, 1e4, -1e4)  # out of the view: the eye looks through glass
    scene.flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = 1
    scene.flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = 1
    pixels = np.empty((size, size, 3), dtype=np.uint8)
    with shared_gl():
        context = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100)
        try:
            mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, context)
            rect = mujoco.MjrRect(0, 0, size, size)
            mujoco.mjr_render(rect, scene, context)
            mujoco.mjr_readPixels(pixels, None, rect, context)
        finally:
            context.free()
    ids = pixels[::-1].astype(np.int64)
    segid = ids[..., 0] + ids[..., 1] * 256 + ids[..., 2] * 65536  # segid + 1, 0 = background
    by_segid = np.full(scene.ngeom + 1, -1)
    for k in range(scene.ngeom):
        g = scene.geoms[k]
        if g.objtype == mujoco.mjtObj.mjOBJ_GEOM and g.segid >= 0:
            by_segid[g.segid + 1] = owner[g.objid]
    return by_segid[np.clip(segid, 0, scene.ngeom)]


def _children_tasks():
    with CHILDREN.open() as handle:
        return [row["task_id"] for row in csv.DictReader(handle)]


def test_listing_agrees_with_the_segmented_image_on_the_children_tasks(testbed_dir):
    size = SIGHT_RAYS
    sim = Simulator(size)
    tasks = _children_tasks()
    assert len(tasks) == 40
    pixel_disagreement = []
    try:
        for k, task in enumerate(tasks):
            rng = np.random.default_rng(k)
            sim.load(place_arena(load_config(testbed_dir / f"{task}.yaml").arena(), rng), rng)
            segmented = _segmentation(sim, size).ravel()
            objects, _, _, ray = sim.sight.hits(sim._data)
            glass = {i for i, o in enumerate(sim._objects)
                     if o.spec.alpha < 1 and o.spec.kind in ("wall", "tunnel")}
            # per pixel: the one non-glass surface its ray stopped at, as the drawing has it
            rays = np.full(size * size, -1)
            solid = np.array([o not in glass for o in objects], dtype=bool)
            rays[ray[solid]] = objects[solid]
            listed = {s.index for s in sim.look()[1]} - glass
            drawn = set(np.unique(segmented[segmented >= 0]).tolist()) - glass
            counts = {i: int(np.count_nonzero(segmented == i)) for i in drawn}
            # every object covering 3 or more pixels is listed, and every listed object drawn
            missing = {i for i in drawn - listed if counts[i] >= 3}
            assert not missing, (task, missing, counts)
            assert listed <= drawn | {i for i in listed if _rays_of(objects, i) < 3}, task
            pixel_disagreement.append(float(np.mean(rays != segmented)))
    finally:
        sim.close()
    # the same pixel centres: disagreement only along edges (rasterisation vs exact rays)
    assert max(pixel_disagreement) < 0.02, pixel_disagreement


def _rays_of(objects, index):
    return int(np.count_nonzero(objects == index))
