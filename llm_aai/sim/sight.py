"""What the agent's eye can see, as data: which objects, where, and how much of each.

This is a view of the simulator's state for perception-free probes: the text observation
(``llm_aai.perception``) words it, the simulator itself never does. Visibility is the
camera's: rays are cast through the centres of an ``n x n`` pixel grid of the eye camera
(same 100 degree field of view, same far plane), so an object counts as seen when at least
one ray's first hit is one of its geoms. Transparent walls and tunnels are seen *and* seen
through: the rays that met glass are cast again with the glass hidden, so a ball behind
glass is listed with the glass in front of it, a ball behind a brick wall is not. Ray
casting (``mujoco.mj_multiRay``) needs no OpenGL, so text observations cost no rendering:
about 0.1 s a look at 256 x 256 rays, glass or not.

Limits, by design of a sampled view: an object smaller than the spacing of the rays (about
0.4 degree at the default 256 rays a side) can fall between them, as it would cover less
than a pixel of a 256 px image.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from llm_aai.arena.objects import Kind
from llm_aai.arena.placement import PlacedObject
from llm_aai.sim.coords import to_unity
from llm_aai.sim.scene import GROUP_SOLID, GROUP_ZONE

SIGHT_RAYS = 256
"""Rays per side of the sampled eye image (a 256 x 256 px picture's pixel centres): at 128, a
2 m deep zone 13 m away fell between two rows of rays (70 ms a look on one core at 256)."""
_HIDDEN_GROUP = 5
"""A geom group no pass casts against (MuJoCo has 6; the scene uses 0-3)."""


def geom_owners(model) -> dict[int, int]:
    """Geom id -> placed-object index (geoms ``obj{i}``, ``obj{i}_{k}``), -1 for the fence.

    The scene names every object's geoms after its index (``llm_aai.sim.scene``); the floor
    and the agent own none.
    """
    import mujoco

    owners = {}
    for geom in range(model.ngeom):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom) or ""
        if name.startswith("obj"):
            owners[geom] = int(name[3:].split("_")[0])
        elif name.startswith(("outer", "fence")):
            owners[geom] = -1
    return owners


@dataclass(frozen=True)
class Sighting:
    """One object the agent can see now.

    Angles are degrees in the eye's frame: ``bearing`` positive to the right of straight
    ahead, ``elevation`` positive above eye level. Distances are metres on the ground plane
    from the eye.

    Attributes:
        index: the object's position in ``PlacedArena.objects``.
        obj: the placed object (its kind, name, size, colour and spawn pose).
        centre: its current centre, Unity coordinates (y up).
        distance: to its centre.
        bearing / elevation: of its centre.
        nearest: to the closest point of it that a ray hit.
        leftmost / rightmost: the bearings of its visible part's two edges.
        rays: how many of the ``SIGHT_RAYS**2`` rays saw it first (or through glass).
        behind_glass: some of it is seen only through a transparent wall or tunnel.
    """

    index: int
    obj: PlacedObject
    centre: tuple[float, float, float]
    distance: float
    bearing: float
    elevation: float
    nearest: float
    leftmost: float
    rightmost: float
    rays: int
    behind_glass: bool


@dataclass(frozen=True)
class Eye:
    """Where the agent looks from: Unity position of the eye and the agent's yaw (degrees)."""

    position: tuple[float, float, float]
    yaw: float


class Sight:
    """Casts the eye's rays in one loaded model; rebuilt by the simulator on every load.

    Args:
        model: the compiled arena.
        objects: the placed objects, in the order whose index names their geoms (``obj{i}``
            and ``obj{i}_{k}``).
        rays: rays per side of the sampled image.
    """

    def __init__(self, model, objects: tuple[PlacedObject, ...] | list[PlacedObject],
                 rays: int = SIGHT_RAYS) -> None:
        import mujoco

        self._mujoco = mujoco
        self._model = model
        self._rays_model = copy.copy(model)  # its geom groups hide what a pass must not see
        self._objects = tuple(objects)
        self._posed = mujoco.MjData(model)
        self._camera = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, "eye")
        self._agent_body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "agent")
        self._far = float(model.vis.map.zfar * model.stat.extent)
        self._owner = np.full(model.ngeom, -1, dtype=np.int64)
        for geom, owner in geom_owners(model).items():
            self._owner[geom] = owner
        see_through = [i for i, obj in enumerate(self._objects)
                       if obj.spec.alpha < 1 and obj.spec.kind in (Kind.WALL, Kind.TUNNEL)]
        self._glass = np.isin(self._owner, see_through)
        self._geoms_of = {i: np.flatnonzero(self._owner == i) for i in range(len(objects))}
        self._groups = np.zeros(6, dtype=np.uint8)
        self._groups[[GROUP_SOLID, GROUP_ZONE]] = 1
        half = math.tan(math.radians(float(model.cam_fovy[self._camera])) / 2)
        ticks = (np.arange(rays) + 0.5) / rays * 2 - 1
        u, v = np.meshgrid(ticks * half, -ticks * half)  # image rows run top to bottom
        self._grid = np.stack([u.ravel(), v.ravel()], axis=1)
        self.rays = rays

    @property
    def far(self) -> float:
        """The camera's far plane, metres: nothing beyond it is drawn or listed."""
        return self._far

    def eye(self, data) -> Eye:
        """The eye's Unity position and the agent's yaw for ``data``'s state."""
        posed = self._pose(data)
        forward = self._frame(posed)[2]
        yaw = math.degrees(math.atan2(forward[0], forward[1])) % 360.0
        return Eye(to_unity(posed.cam_xpos[self._camera]), yaw)

    def hits(self, data) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every object surface the rays see, for checks against a rendered image.

        Returns:
            ``objects`` (index into the placed objects, -1 for the floor or the fence),
            ``distances`` along the ray (metres), ``through_glass`` (seen through a
            transparent surface) and ``ray_index`` (row-major pixel of the sampled image).
            A ray that crosses glass yields the glass and what lies behind it, so a pixel
            may appear more than once; a ray that hits nothing appears not at all.
        """
        posed = self._pose(data)
        origin, directions = self._rays(posed)
        return self._cast(posed, origin, directions)

    def look(self, data) -> list[Sighting]:
        """The objects seen from ``data``'s state, nearest first (ties by index)."""
        posed = self._pose(data)
        right, up, forward = self._frame(posed)
        origin, directions = self._rays(posed)
        objects, distances, glass, ray_index = self._cast(posed, origin, directions)
        points = origin + directions[ray_index] * distances[:, None]
        sightings = []
        for index in np.unique(objects[objects >= 0]):
            mine = objects == index
            offsets = points[mine] - origin
            ground = np.hypot(offsets[:, 0], offsets[:, 1])
            bearings = np.degrees(np.arctan2(offsets @ right, offsets @ forward))
            centre = self._posed_centre(posed, int(index))
            to_centre = centre - origin
            horizontal = float(np.hypot(to_centre[0], to_centre[1]))
            sightings.append(Sighting(
                index=int(index),
                obj=self._objects[index],
                centre=to_unity(centre),
                distance=horizontal,
                bearing=math.degrees(math.atan2(to_centre @ right, to_centre @ forward)),
                elevation=math.degrees(math.atan2(float(to_centre @ up), horizontal)),
                nearest=float(ground.min()),
                leftmost=float(bearings.min()),
                rightmost=float(bearings.max()),
                rays=int(np.count_nonzero(mine)),
                behind_glass=bool(np.any(glass[mine])),
            ))
        return sorted(sightings, key=lambda s: (round(s.distance, 6), s.index))

    def centres(self, data) -> list[tuple[float, float, float]]:
        """Every placed object's current centre (Unity coordinates), seen or not."""
        posed = self._pose(data)
        return [to_unity(self._posed_centre(posed, i)) for i in range(len(self._objects))]

    # ------------------------------------------------------------------ internals
    def _pose(self, data):
        """A scratch copy of ``data`` with poses computed from its ``qpos`` (see render.py)."""
        mujoco, posed = self._mujoco, self._posed
        posed.qpos[:] = data.qpos
        posed.mocap_pos[:] = data.mocap_pos
        posed.mocap_quat[:] = data.mocap_quat
        mujoco.mj_kinematics(self._model, posed)
        mujoco.mj_camlight(self._model, posed)
        return posed

    def _frame(self, posed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The eye's right, up and forward unit vectors (MuJoCo world frame)."""
        axes = posed.cam_xmat[self._camera].reshape(3, 3)  # columns: camera x, y, z
        return axes[:, 0].copy(), axes[:, 1].copy(), -axes[:, 2]

    def _rays(self, posed) -> tuple[np.ndarray, np.ndarray]:
        right, up, forward = self._frame(posed)
        directions = forward + self._grid[:, :1] * right + self._grid[:, 1:] * up
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return posed.cam_xpos[self._camera].copy(), directions

    def _multi_ray(self, model, posed, origin, directions) -> tuple[np.ndarray, np.ndarray]:
        n = len(directions)
        geoms = np.full(n, -1, dtype=np.int32)
        dists = np.full(n, -1.0)
        # MuJoCo 3.3+ added an optional per-ray normal output before ``nray``
        normal = (None,) if "normal" in (self._mujoco.mj_multiRay.__doc__ or "") else ()
        self._mujoco.mj_multiRay(model, posed, origin, directions.ravel(), self._groups,
                                 1, self._agent_body, geoms, dists, *normal, n, self._far)
        return geoms, dists

    def _cast(self, posed, origin, directions):
        """First hits, then, for rays that met glass, the first solid hit behind it.

        Both passes run in a copy of the model whose hidden group holds what a pass must
        not see: collected yellow balls (alpha 0, drawn as nothing but still in the model)
        always, and transparent walls and tunnels in the second pass. Two glass panes in a
        row show the nearer one and what lies behind both.
        """
        rays_model = self._rays_model
        rays_model.geom_group[:] = self._model.geom_group
        rays_model.geom_group[self._model.geom_rgba[:, 3] == 0] = _HIDDEN_GROUP
        geoms, dists = self._multi_ray(rays_model, posed, origin, directions)
        owners = np.where(geoms >= 0, self._owner[np.maximum(geoms, 0)], -1)
        glass = (geoms >= 0) & self._glass[np.maximum(geoms, 0)]
        seen = geoms >= 0
        found = [(owners[seen], dists[seen], np.zeros(int(seen.sum()), dtype=bool),
                  np.flatnonzero(seen))]
        if glass.any():
            rays_model.geom_group[self._glass] = _HIDDEN_GROUP
            behind = np.flatnonzero(glass)
            geoms, dists = self._multi_ray(rays_model, posed, origin, directions[behind])
            hit = geoms >= 0
            found.append((self._owner[geoms[hit]], dists[hit], np.ones(int(hit.sum()), bool),
                          behind[hit]))
        return tuple(np.concatenate(column) for column in zip(*found, strict=True))

    def _posed_centre(self, posed, index: int) -> np.ndarray:
        return posed.geom_xpos[self._geoms_of[index]].mean(axis=0)
