"""The one place where Unity's coordinates meet MuJoCo's.

Animal-AI is a Unity world: left-handed, y up, yaw in degrees clockwise seen from above, an
object facing ``(sin yaw, 0, cos yaw)``. MuJoCo is right-handed with z up. Swapping Unity's
y and z is a reflection, which turns one handedness into the other, so

    mujoco (x, y, z) = (unity x, unity z, unity y)

maps positions with no further sign changes. Under that map Unity's clockwise yaw becomes a
*negative* rotation about MuJoCo's z axis: a body with Unity yaw ``theta`` has MuJoCo angle
``-theta``, its local +y (MuJoCo) is the Unity facing direction and its local +x is Unity's
right-hand side. Check against the real recording: the agent at (2, 0, 2) with yaw 0 faces
+z (MuJoCo +y) and has the fence x = 0 on its left (MuJoCo -x).
"""

from __future__ import annotations

import math

import numpy as np


def to_mj(unity: tuple[float, float, float]) -> tuple[float, float, float]:
    """Map a Unity point or vector (x, y, z) to MuJoCo (x, z, y)."""
    x, y, z = unity
    return (x, z, y)


def to_unity(mj: tuple[float, float, float] | np.ndarray) -> tuple[float, float, float]:
    """Map a MuJoCo point or vector back to Unity (the map is its own inverse)."""
    x, y, z = mj
    return (float(x), float(z), float(y))


def yaw_to_angle(yaw_deg: float) -> float:
    """MuJoCo rotation about +z (radians) for a Unity yaw in degrees (clockwise from above)."""
    return -math.radians(yaw_deg)


def yaw_quat(yaw_deg: float) -> tuple[float, float, float, float]:
    """MuJoCo quaternion (w, x, y, z) of a body with the given Unity yaw."""
    half = 0.5 * yaw_to_angle(yaw_deg)
    return (math.cos(half), 0.0, 0.0, math.sin(half))


def rotate_local(yaw_deg: float, local_x: float, local_z: float) -> tuple[float, float]:
    """World (MuJoCo x, y) offset of a point at Unity-local (x, z) on a yawed body."""
    theta = math.radians(yaw_deg)
    cos, sin = math.cos(theta), math.sin(theta)
    return (local_x * cos + local_z * sin, -local_x * sin + local_z * cos)
