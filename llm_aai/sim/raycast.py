"""The agent's ray perception: what ML-Agents' ray sensor reports, cast with MuJoCo's ``mj_ray``.

Animal-AI's agent carries a ``RayPerceptionSensor3D``: ``2 n + 1`` horizontal rays from the
agent's centre, the first straight ahead and then alternately right and left of it, ``d / n``
degrees apart (``n`` rays per side, ``d`` the widest angle). Each ray reports which *tag* the
first thing it hits carries and how far along the ray the hit lies (a fraction of its length).
Unity casts spheres of radius 0.5 m; these rays are thin lines, so an object narrower than the
gaps between rays can slip between them here where Unity would touch it. Geom poses are those
MuJoCo computed at the start of the last physics step (0.02 s old), as for contacts.

Tags are named by Animal-AI's object classes (``RAY_TAGS``, in the order of the tag list that
``animalai`` 6.2.0's ``RayCastParser`` indexes); this module only says which tag a placed
object has, the layout of the float vector is the bridge's business.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from llm_aai.sim.coords import to_mj

RAY_TAGS = (
    "arena", "Immovable", "Movable", "goodGoal", "goodGoalMulti", "badGoal", "GoalSpawner",
    "DeathZone", "HotZone", "Ramp", "PillarButton", "SignPoster", "DecoyGoal",
    "DecoyGoalBounce", "HollowObj", "badGoalMulti", "DataZone", "Agent",
)
"""Animal-AI's detectable tags, in the sensor's order (index = position in the one-hot)."""

_TAG_OF_OBJECT = {
    "Wall": "Immovable", "WallTransparent": "Immovable", "CylinderTunnel": "Immovable",
    "CylinderTunnelTransparent": "Immovable", "Ramp": "Ramp",
    "Cardbox1": "Movable", "Cardbox2": "Movable", "UObject": "Movable", "LObject": "Movable",
    "LObject2": "Movable", "DeathZone": "DeathZone", "HotZone": "HotZone",
    "GoodGoal": "goodGoal", "GoodGoalBounce": "goodGoal", "GoodGoalMulti": "goodGoalMulti",
    "GoodGoalMultiBounce": "goodGoalMulti", "BadGoal": "badGoal", "BadGoalBounce": "badGoal",
}
RAY_LENGTH = 200.0
"""Metres; the agent prefab's ``m_RayLength``."""


def tag_of_object(name: str) -> str:
    """The Unity tag of an object type by its YAML name (``Immovable`` when unknown)."""
    return _TAG_OF_OBJECT.get(name, "Immovable")


def ray_angles(rays_per_side: int, max_degrees: float) -> list[float]:
    """Ray directions in degrees from the agent's right towards its front, sensor order.

    90 is straight ahead; then ``90 - k delta`` (right) and ``90 + k delta`` (left) for
    ``k = 1..n``, alternating, as ML-Agents' ``RayPerceptionSensorComponentBase`` orders them.
    """
    if rays_per_side < 0:
        raise ValueError(f"rays per side must be >= 0, got {rays_per_side}")
    angles = [90.0]
    if rays_per_side:
        delta = max_degrees / rays_per_side
        for k in range(1, rays_per_side + 1):
            angles += [90.0 - k * delta, 90.0 + k * delta]
    return angles


@dataclass(frozen=True)
class RayHit:
    """What one ray met: a tag index into ``RAY_TAGS`` (None: nothing) and the hit fraction."""

    tag: int | None
    fraction: float


def cast_rays(model, data, origin_unity: Sequence[float], yaw_deg: float, angles: Sequence[float],
              *, exclude_body: int, tag_of_geom: Callable[[int], int | None],
              length: float = RAY_LENGTH) -> list[RayHit]:
    """Cast one horizontal ray per angle from ``origin_unity`` on an agent facing ``yaw_deg``.

    Args:
        model: the ``MjModel``.
        data: the ``MjData`` whose geom poses the rays test.
        origin_unity: ray start, Unity coordinates.
        yaw_deg: the agent's yaw (Unity, clockwise from +z seen from above).
        angles: from ``ray_angles``.
        exclude_body: a body the rays start inside and must not see (the agent's own).
        tag_of_geom: the tag index of a geom id, or None for geoms rays pass through.
        length: the rays' length in metres.

    """
    import mujoco

    theta = math.radians(yaw_deg)
    forward = (math.sin(theta), 0.0, math.cos(theta))
    right = (math.cos(theta), 0.0, -math.sin(theta))
    start = np.array(to_mj(tuple(origin_unity)), dtype=np.float64)
    geomid = np.zeros(1, dtype=np.int32)
    hits = []
    for angle in angles:
        a = math.radians(angle)
        ca, sa = math.cos(a), math.sin(a)
        direction = tuple(ca * r + sa * f for r, f in zip(right, forward, strict=True))
        vector = np.array(to_mj(direction), dtype=np.float64) * length
        origin = start.copy()
        hit = None
        travelled = 0.0
        # Step past geoms that have no tag (invisible helpers) and keep looking behind them.
        for _ in range(8):
            distance = mujoco.mj_ray(model, data, origin, vector / length, None, 1,
                                     exclude_body, geomid)
            if distance < 0 or travelled + distance > length:
                break
            tag = tag_of_geom(int(geomid[0]))
            if tag is not None:
                hit = RayHit(tag, (travelled + distance) / length)
                break
            step = distance + 1e-4
            origin = origin + vector / length * step
            travelled += step
        hits.append(hit or RayHit(None, 1.0))
    return hits


def tag_index_of_geom(model, placed, geom: int) -> int | None:
    """The ``RAY_TAGS`` index of MuJoCo geom ``geom`` in a world built by ``build_scene``.

    Object geoms are named ``obj<i>`` or ``obj<i>_<k>`` after ``placed.objects[i]``; the
    floor, fence and outer colliders belong to the arena. A collected goal (made invisible
    and intangible) and the agent are seen by no ray.
    """
    import mujoco

    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom) or ""
    if name == "agent":
        return None
    if name.startswith("obj"):
        index = name[3:].split("_")[0]
        if index.isdigit():
            if model.geom_rgba[geom, 3] == 0.0 and model.geom_contype[geom] == 0:
                return None
            spec_name = placed.objects[int(index)].spec.name
            return RAY_TAGS.index(tag_of_object(spec_name))
    return RAY_TAGS.index("arena")
