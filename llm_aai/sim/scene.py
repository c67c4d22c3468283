"""Turn a ``PlacedArena`` into a MuJoCo world (MJCF text plus in-memory texture assets).

Every object family of ``llm_aai.arena.objects.Kind`` has one builder, looked up in
``_BUILDERS``; adding a family means adding a builder, not another ``elif``. The builders
translate AAI's geometry (sizes are world extents, positions are the centre of the bottom
face, yaw is Unity's clockwise degrees) through ``llm_aai.sim.coords``.

What is static and what moves follows Animal-AI: tunnels have no Rigidbody, so they are welded
to the world; walls (10 t) and ramps (1 t) are rigid bodies under gravity, too heavy for the
agent to push but free to settle, tip and fall (a rail on pillars of unequal height tips and
drops its balls); boxes, U/L/J shapes and balls are free bodies. Zones have no collider at
all: ``llm_aai.sim.rules`` tests the agent's overlap with them by geometry, as Unity's trigger
volumes do. Bodies at rest fall asleep (``looks.SLEEP_TOLERANCE``), except the agent and the
pushable bodies.

Geom groups: 0 visible solids, 1 zone patches, 2 invisible colliders (outer walls),
3 the agent's own body (hidden from its eye camera).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from llm_aai.arena.geometry import ARENA_SIZE, Arch, Box
from llm_aai.arena.objects import Kind, ObjectSpec
from llm_aai.arena.placement import PlacedArena, PlacedObject
from llm_aai.sim import looks
from llm_aai.sim.agent_physics import contact_attributes
from llm_aai.sim.coords import rotate_local, to_mj, yaw_quat

FLOOR_TOP = -0.01
"""Unity's ground box top face (y = -0.01); everything rests on it."""
AGENT_RADIUS = 0.5
AGENT_MASS = 100.0
WALL_MASS = 10000.0
"""kg of a Wall or WallTransparent: a non-kinematic Rigidbody under gravity in AAI 3.x/4.x
(docs/animal-ai-facts.md §4, from the Wall prefab)."""
RAMP_MASS = 1000.0
"""kg of a Ramp: a non-kinematic Rigidbody under gravity (docs/animal-ai-facts.md §4)."""
TUNNEL_SEGMENTS = 14
TUNNEL_MIN_THICKNESS = 0.06

GROUP_SOLID, GROUP_ZONE, GROUP_INVISIBLE, GROUP_AGENT = 0, 1, 2, 3


@dataclass(frozen=True)
class GoalInfo:
    """A ball the rules must watch: which geom, what it pays and how it ends the episode."""

    index: int  # position in PlacedArena.objects
    name: str  # the spec name, used as the RewardEvent kind
    geom: str
    body: str
    spec: ObjectSpec
    reward: float  # sign x diameter (AAI: clamp(x, 0.5, 5) x 0.999, already in size)


@dataclass(frozen=True)
class ZoneInfo:
    """A death or hot zone: its trigger box in Unity coordinates."""

    index: int
    name: str
    box: Box
    spec: ObjectSpec


@dataclass(frozen=True)
class BounceInfo:
    """A bounce ball's starting velocity (MuJoCo world frame, m/s)."""

    body: str
    velocity: tuple[float, float, float]


@dataclass(frozen=True)
class PushableInfo:
    """A body the agent can push across the floor (Cardbox, U/L/J block).

    Its contacts with the floor come from explicit frictionless pairs (see
    ``llm_aai.sim.floor_friction``, which applies their Coulomb friction).
    """

    body: str
    geoms: tuple[str, ...]
    cardbox: bool  # a Cardbox (LowFriction material), not a U/L/J block


@dataclass
class Scene:
    """The compiled description of one arena, ready for ``mujoco.MjModel.from_xml_string``.

    Attributes:
        xml: MJCF text.
        assets: file name -> bytes for the procedurally drawn textures the XML references.
        goals / zones / bounces: what ``llm_aai.sim.rules`` and the simulator act on.
        pushables: the free bodies whose floor friction ``llm_aai.sim.floor_friction``
            applies.
        agent_start: MuJoCo position of the agent's centre at spawn.
        agent_yaw: Unity yaw of the agent at spawn (degrees).
    """

    xml: str
    assets: dict[str, bytes]
    goals: list[GoalInfo]
    zones: list[ZoneInfo]
    bounces: list[BounceInfo]
    agent_start: tuple[float, float, float]
    agent_yaw: float
    pushables: list[PushableInfo] = field(default_factory=list)


@dataclass
class _Parts:
    """MJCF fragments accumulated by the builders."""

    assets: list[str] = field(default_factory=list)
    static: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)
    goals: list[GoalInfo] = field(default_factory=list)
    zones: list[ZoneInfo] = field(default_factory=list)
    bounces: list[BounceInfo] = field(default_factory=list)
    pushables: list[PushableInfo] = field(default_factory=list)


def _fmt(values) -> str:
    return " ".join(f"{float(v):.6g}" for v in values)


def _quat_mul(a, b) -> tuple[float, float, float, float]:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def _rgba(obj: PlacedObject) -> str:
    return _fmt((*obj.color, obj.spec.alpha))


def _box_geom(name: str, centre, half, quat, obj: PlacedObject, material: str) -> str:
    return (
        f'<geom name="{name}" type="box" pos="{_fmt(centre)}" size="{_fmt(half)}" '
        f'quat="{_fmt(quat)}" rgba="{_rgba(obj)}" material="{material}"/>'
    )


def _centre(obj: PlacedObject, height: float) -> tuple[float, float, float]:
    """MuJoCo centre of an object whose bottom face centre is ``obj.position``."""
    x, y, z = obj.position
    return to_mj((x, y + height / 2.0, z))


def _rigid_body(i: int, position, yaw: float, geom: str) -> str:
    """A free body under gravity holding ``geom`` (its frame at ``position``, turned by yaw)."""
    return (f'<body name="body{i}" pos="{_fmt(position)}" quat="{_fmt(yaw_quat(yaw))}">'
            f"<freejoint/>{geom}</body>")


def _wall(i: int, obj: PlacedObject, parts: _Parts) -> None:
    """A wall: a box rigid body of ``WALL_MASS`` (docs/animal-ai-facts.md §4)."""
    sx, sy, sz = obj.size
    material = "glass" if obj.spec.alpha < 1 else "brick"
    geom = (f'<geom name="obj{i}" type="box" size="{_fmt((sx / 2, sz / 2, sy / 2))}" '
            f'mass="{WALL_MASS:g}" rgba="{_rgba(obj)}" material="{material}" class="heavy"/>')
    parts.bodies.append(_rigid_body(i, _centre(obj, sy), obj.yaw, geom))


def _ramp(i: int, obj: PlacedObject, parts: _Parts) -> None:
    """A ramp: a wedge rigid body of ``RAMP_MASS`` (docs/animal-ai-facts.md §4)."""
    # Tall vertical end on local -z (Unity), slope descending toward +z; MuJoCo local (x, z, y).
    w, h, length = obj.size
    verts = []
    for x in (-w / 2, w / 2):
        verts += [(x, -length / 2, 0.0), (x, -length / 2, h), (x, length / 2, 0.0)]
    parts.assets.append(f'<mesh name="ramp{i}" vertex="{_fmt(np.ravel(verts))}"/>')
    geom = (f'<geom name="obj{i}" type="mesh" mesh="ramp{i}" mass="{RAMP_MASS:g}" '
            f'rgba="{_rgba(obj)}" material="ramp" class="heavy"/>')
    parts.bodies.append(_rigid_body(i, to_mj(obj.position), obj.yaw, geom))


def _tunnel(i: int, obj: PlacedObject, parts: _Parts) -> None:
    """A half-pipe arch (semi-ellipse of half-width x/2 and height y/2) made of convex slabs.

    Same shape as the placer's ``Arch``: the scaled Unity cylinder has diameters x and y, cut
    in half; its shell lies inside that outline. MuJoCo collides convex hulls only, so a
    hollow tunnel must be a chain of boxes for the agent to be able to pass inside it.
    """
    sx, sy, sz = obj.size
    a, b = sx / 2.0, sy / 2.0
    t = max(Arch.wall * min(a, b), TUNNEL_MIN_THICKNESS)
    yaw = yaw_quat(obj.yaw)
    material = "glass" if obj.spec.alpha < 1 else "plain"
    angles = np.linspace(0.0, math.pi, TUNNEL_SEGMENTS + 1)
    ox, oy, oz = to_mj(obj.position)
    for k in range(TUNNEL_SEGMENTS):
        (x0, y0), (x1, y1) = ((a * math.cos(p), b * math.sin(p)) for p in angles[k : k + 2])
        dx, dy = x1 - x0, y1 - y0
        chord = math.hypot(dx, dy)
        nx, ny = dy / chord, -dx / chord  # outward normal: the arc runs anticlockwise
        mid_x, mid_y = (x0 + x1) / 2 - nx * t / 2, (y0 + y1) / 2 - ny * t / 2
        wx, wy = rotate_local(obj.yaw, mid_x, 0.0)
        alpha = math.atan2(-dy, dx)  # rotate the slab's x axis about the tunnel axis (local y)
        local = (math.cos(alpha / 2), 0.0, math.sin(alpha / 2), 0.0)
        parts.static.append(
            _box_geom(f"obj{i}_{k}", (ox + wx, oy + wy, oz + mid_y),
                      (chord / 2 + t / 2, sz / 2, t / 2), _quat_mul(yaw, local), obj, material)
        )


def _pushable_body(i: int, obj: PlacedObject, geoms: str) -> str:
    """A Cardbox or U/L/J block body, which never sleeps.

    Its friction is applied outside MuJoCo (``llm_aai.sim.floor_friction``,
    ``llm_aai.sim.pair_friction``) from contacts read after every step, and a sleeping body has
    none, so its first step awake would slide free.
    """
    return (f'<body name="body{i}" pos="{_fmt(_centre(obj, obj.size[1]))}" '
            f'quat="{_fmt(yaw_quat(obj.yaw))}" sleep="never"><freejoint/>{geoms}</body>')


def _box(i: int, obj: PlacedObject, parts: _Parts) -> None:
    sx, sy, sz = obj.size
    geom = (
        f'<geom name="obj{i}" type="box" size="{_fmt((sx / 2, sz / 2, sy / 2))}" '
        f'mass="{obj.spec.mass}" rgba="{_rgba(obj)}" material="crate" class="pushable"/>'
    )
    parts.bodies.append(_pushable_body(i, obj, geom))
    parts.pushables.append(PushableInfo(f"body{i}", (f"obj{i}",), cardbox=True))


_U_ARMS = {"UObject": (1, -1), "LObject": (-1,), "LObject2": (-1,)}
_U_ARM_SIDE = {"UObject": 1.0, "LObject": 1.0, "LObject2": -1.0}


def _u_block(i: int, obj: PlacedObject, parts: _Parts) -> None:
    """U, L and J shapes: a spine and one or two arms (AAI's prefab colliders, scaled).

    Unity prefab (before scale): spine 1x1x10 at the origin, arms 3x1x1 centred at
    (x = +-1, z = +-5.5); scale (0.3 sx, sy, 0.1 sz). The yaw already carries the prefab's
    +90 degrees (the placer adds it). Unlike the Cardboxes, their colliders have no physics
    material (U3 ``Assets/Prefabs/Moveable/UObject.prefab``: ``m_Material`` fileID 0): Unity's
    default mu 0.6, which the ``movable`` class carries for the agent's friction with them;
    ``llm_aai.sim.pair_friction`` gives 0.425 against a box.
    """
    sx, sy, sz = obj.size
    name = obj.spec.name if obj.spec.name in _U_ARMS else _alias_to_name(obj.spec)
    pieces = [((0.0, 0.0), (0.15 * sx, 0.5 * sz))]  # (centre x, z), half (x, z) in Unity local
    side = _U_ARM_SIDE[name]
    for zsign in _U_ARMS[name]:
        pieces.append(((side * 0.3 * sx, zsign * 0.55 * sz), (0.45 * sx, 0.05 * sz)))
    volumes = [hx * hz for _, (hx, hz) in pieces]
    geoms = []
    for k, ((cx, cz), (hx, hz)) in enumerate(pieces):
        mass = obj.spec.mass * volumes[k] / sum(volumes)
        geoms.append(
            f'<geom name="obj{i}_{k}" type="box" pos="{_fmt((cx, cz, 0.0))}" '
            f'size="{_fmt((hx, hz, sy / 2))}" mass="{mass:.6g}" rgba="{_rgba(obj)}" '
            f'material="plank" class="movable"/>'
        )
    parts.bodies.append(_pushable_body(i, obj, "".join(geoms)))
    parts.pushables.append(
        PushableInfo(f"body{i}", tuple(f"obj{i}_{k}" for k in range(len(pieces))), cardbox=False)
    )


def _alias_to_name(spec: ObjectSpec) -> str:
    for name in _U_ARMS:
        if name in spec.aliases or spec.name == name:
            return name
    raise ValueError(f"no U/L/J geometry known for object {spec.name!r}")


def _zone(i: int, obj: PlacedObject, parts: _Parts) -> None:
    sx, sy, sz = obj.size
    x, bottom, z = obj.position  # the placer puts every zone's slab at centre y = -0.15
    box = Box(center=(x, bottom + sy / 2, z), half=(sx / 2, sy / 2, sz / 2), yaw=obj.yaw)
    parts.zones.append(ZoneInfo(i, obj.spec.name, box, obj.spec))
    # Visible part: a thin patch just above the floor (the trigger itself has no collider).
    patch_half_height = 0.005
    centre = to_mj((x, FLOOR_TOP + patch_half_height + 0.001, z))
    parts.static.append(
        f'<geom name="obj{i}" type="box" pos="{_fmt(centre)}" '
        f'size="{_fmt((sx / 2, sz / 2, patch_half_height))}" quat="{_fmt(yaw_quat(obj.yaw))}" '
        f'rgba="{_fmt(looks.zone_rgba(obj.spec.name, obj.color, obj.spec.alpha))}" '
        f'material="zone" contype="0" conaffinity="0" group="{GROUP_ZONE}"/>'
    )


def _goal(i: int, obj: PlacedObject, parts: _Parts) -> None:
    diameter = obj.size[0]
    centre = _centre(obj, diameter)
    parts.bodies.append(
        f'<body name="body{i}" pos="{_fmt(centre)}"><freejoint/>'
        f'<geom name="obj{i}" type="sphere" size="{diameter / 2:.6g}" mass="{obj.spec.mass}" '
        f'rgba="{_rgba(obj)}" material="goal" class="ball"/></body>'
    )
    parts.goals.append(
        GoalInfo(i, obj.spec.name, f"obj{i}", f"body{i}", obj.spec, obj.spec.reward_sign * diameter)
    )
    if obj.spec.bounce:
        fx, fy = rotate_local(obj.yaw, 0.0, 1.0)
        parts.bounces.append(BounceInfo(f"body{i}", (10.0 * fx, 10.0 * fy, 0.0)))


_BUILDERS: dict[Kind, Callable[[int, PlacedObject, _Parts], None]] = {
    Kind.WALL: _wall,
    Kind.RAMP: _ramp,
    Kind.TUNNEL: _tunnel,
    Kind.BOX: _box,
    Kind.U_BLOCK: _u_block,
    Kind.ZONE: _zone,
    Kind.GOAL: _goal,
}


def _arena_shell() -> list[str]:
    """Floor, the four invisible 400 m outer colliders, and the visible fence."""
    half = ARENA_SIZE / 2
    geoms = [
        f'<geom name="floor" type="plane" pos="{half} {half} {FLOOR_TOP}" size="21 21 1" '
        f'material="floor" class="ground"/>'
    ]
    for k, (cx, cy, hx, hy) in enumerate(
        ((-0.5, half, 0.5, 21), (ARENA_SIZE + 0.5, half, 0.5, 21),
         (half, -0.5, 21, 0.5), (half, ARENA_SIZE + 0.5, 21, 0.5))
    ):
        geoms.append(
            f'<geom name="outer{k}" type="box" pos="{cx} {cy} 199.99" size="{hx} {hy} 200" '
            f'rgba="0 0 0 0" group="{GROUP_INVISIBLE}"/>'
        )
    geoms += looks.fence_geoms(ARENA_SIZE)
    return geoms


def _agent_body(agent: PlacedObject) -> tuple[str, tuple[float, float, float]]:
    # The placer's y already holds AAI's max(y, 0) + 0.01 lift; the centre is a radius above.
    x, y, z = agent.position
    start = to_mj((x, y + AGENT_RADIUS, z))
    body = (
        f'<body name="agent" pos="{_fmt(start)}" gravcomp="1" sleep="never">'
        '<joint name="agent_x" type="slide" axis="1 0 0"/>'
        '<joint name="agent_y" type="slide" axis="0 1 0"/>'
        '<joint name="agent_z" type="slide" axis="0 0 1"/>'
        '<joint name="agent_yaw" type="hinge" axis="0 0 1"/>'
        f'<geom name="agent" type="sphere" size="{AGENT_RADIUS}" mass="{AGENT_MASS}" '
        f'group="{GROUP_AGENT}" priority="2" friction="0 0 0" condim="1" {contact_attributes()} '
        'rgba="0.55 0.45 0.4 1"/>'
        '<site name="agent_sole" type="box" pos="0 0 -0.26" size="0.6 0.6 0.25" rgba="0 0 0 0"/>'
        '<camera name="eye" pos="0 0 0" xyaxes="1 0 0 0 0 1" fovy="100"/>'
        "</body>"
    )
    return body, start


def build_scene(placed: PlacedArena, *, resolution: int = 512) -> Scene:
    """Build the MJCF of ``placed``.

    Args:
        placed: an arena with every random choice resolved.
        resolution: the offscreen buffer's starting size, the eye camera's (the renderer
            grows it for a larger overview).

    Returns:
        The scene, whose XML compiles with ``mujoco.MjModel.from_xml_string(xml, assets)``.
    """
    parts = _Parts()
    for i, obj in enumerate(placed.objects):
        builder = _BUILDERS.get(obj.spec.kind)
        if builder is None:
            raise ValueError(f"object {obj.spec.name!r} has kind {obj.spec.kind}, which the "
                             "simulator cannot build")
        builder(i, obj, parts)
    agent_body, start = _agent_body(placed.agent)
    # Contacts the contype/conaffinity bits filter out (looks.py), given as explicit pairs,
    # both frictionless in MuJoCo: pushable bodies against the floor (whose friction
    # ``llm_aai.sim.floor_friction`` applies) and Cardbox against Cardbox (whose friction
    # ``llm_aai.sim.pair_friction`` applies, as for every other contact of a pushable body).
    pairs = [
        f'<pair geom1="floor" geom2="{geom}" condim="1"/>'
        for pushable in parts.pushables for geom in pushable.geoms
    ]
    boxes = [p.geoms[0] for p in parts.pushables if p.cardbox]
    pairs += [
        f'<pair geom1="{a}" geom2="{b}" condim="1"/>'
        for k, a in enumerate(boxes) for b in boxes[k + 1:]
    ]
    xml = looks.document(
        assets="".join(parts.assets),
        static="".join(_arena_shell() + parts.static),
        bodies=agent_body + "".join(parts.bodies),
        contacts="".join(pairs),
        resolution=resolution,
    )
    return Scene(
        xml=xml,
        assets=looks.texture_assets(),
        goals=parts.goals,
        zones=parts.zones,
        bounces=parts.bounces,
        agent_start=start,
        agent_yaw=placed.agent.yaw,
        pushables=parts.pushables,
    )
