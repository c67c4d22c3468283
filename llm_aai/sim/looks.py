"""How the arena looks: MJCF header (options, lights, camera limits), materials and textures.

Kept apart from ``scene.py`` (geometry) because looks are tuned by eye against the Unity
recording while geometry is fixed by AAI's rules. Colours are chosen so the *rendered* pixels
approach colours sampled from the recording's frames: sky about (124, 156, 209), fence
(170, 186, 198), sunlit floor (216, 183, 132) and shaded floor (137, 131, 107). Textures are
drawn procedurally with a fixed seed and handed to MuJoCo as in-memory assets, so building a
world never reads a file.
"""

from __future__ import annotations

import functools
import io
import math

import numpy as np

# Light: Unity's sun has Euler (50, -30, 0): 50 degrees up, shining toward -x/+z (Unity), so
# shadows fall toward -x/+z. In MuJoCo coordinates (x, z_unity, y_unity):
_SUN_DIR = (
    -math.sin(math.radians(30)) * math.cos(math.radians(50)),
    math.cos(math.radians(30)) * math.cos(math.radians(50)),
    -math.sin(math.radians(50)),
)
AMBIENT = (0.60, 0.63, 0.70)
SUN = (0.55, 0.49, 0.38)
SLEEP_TOLERANCE = 0.1
"""m/s below which a body at rest falls asleep (MuJoCo's sleeping islands; woken by a touch
from an awake body, a force or a velocity). Unity's default ``Physics.sleepThreshold`` is a
mass-normalised kinetic energy of 0.005 m^2/s^2, i.e. a speed of sqrt(2 x 0.005) = 0.1 m/s
(docs/animal-ai-facts.md §4). Sleeping is what holds a settled structure exactly still: MuJoCo's
soft contacts let a plank resting on a slope creep by millimetres per second, PhysX's sleeping
bodies do not; and asleep, the arena's walls cost no solver time."""
_ZONE_RGBA = {"DeathZone": (0.50, 0.22, 0.18, 1.0), "HotZone": (0.95, 0.50, 0.15, 1.0)}


def _fmt(values) -> str:
    return " ".join(f"{float(v):.6g}" for v in values)


def zone_rgba(name: str, color, alpha: float) -> tuple[float, float, float, float]:
    """Colour of a zone's floor patch (AAI draws zones as fog; we draw a coloured patch)."""
    if name in _ZONE_RGBA:
        return _ZONE_RGBA[name]
    return (*color, alpha)


def fence_geoms(size: float) -> list[str]:
    """Visual-only fence: pale boards just outside each side, plus a round rail."""
    half, height, thick = size / 2, 7.1, 0.3
    geoms = []
    sides = (
        (-thick / 2, half, thick / 2, half + thick),
        (size + thick / 2, half, thick / 2, half + thick),
        (half, -thick / 2, half + thick, thick / 2),
        (half, size + thick / 2, half + thick, thick / 2),
    )
    for k, (cx, cy, hx, hy) in enumerate(sides):
        geoms.append(
            f'<geom name="fence{k}" type="box" pos="{cx} {cy} {height / 2 - 0.1}" '
            f'size="{hx} {hy} {height / 2}" material="fence" contype="0" conaffinity="0"/>'
        )
        rail_from = (cx - hx, cy, 1.35) if hx > hy else (cx, cy - hy, 1.35)
        rail_to = (cx + hx, cy, 1.35) if hx > hy else (cx, cy + hy, 1.35)
        inward = (0.0, 0.0)
        if hx < hy:
            inward = (0.2 if cx < half else -0.2, 0.0)
        else:
            inward = (0.0, 0.2 if cy < half else -0.2)
        rail_from = (rail_from[0] + inward[0], rail_from[1] + inward[1], rail_from[2])
        rail_to = (rail_to[0] + inward[0], rail_to[1] + inward[1], rail_to[2])
        geoms.append(
            f'<geom name="rail{k}" type="capsule" fromto="{_fmt(rail_from + rail_to)}" '
            f'size="0.12" material="rail" contype="0" conaffinity="0"/>'
        )
    return geoms


def document(*, assets: str, static: str, bodies: str, resolution: int, contacts: str = "") -> str:
    """The whole MJCF document around the scene's fragments.

    Collision bits (MuJoCo collides two geoms when either's contype shares a bit with the
    other's conaffinity): the floor (class ``ground``) 1/1; Cardboxes (``pushable``) 4/2;
    U/L/J blocks (``movable``) 2/2; every other geom 3/7. So Cardboxes and blocks collide
    with everything except the floor, and Cardboxes not with each other: those contacts are
    the explicit frictionless ``<pair>`` elements in ``contacts``.

    A Cardbox's or block's contacts with walls, ramps and balls are near-rigid (impedance
    0.9999): MuJoCo scales a contact's softness by the effective mass, so a light box (1 kg)
    squeezed by a 10 t wall sank 20 cm into it with the default 0.99 (testbed 06-08: a wall
    ceiling resting on four Cardboxes).

    Every contact of a Cardbox or block is frictionless in MuJoCo (condim 1; their classes'
    priority 1 makes their condim win over every geom's but the agent's, which is also 1):
    ``llm_aai.sim.floor_friction`` and ``llm_aai.sim.pair_friction`` apply the friction and
    explain why.
    """
    buf = max(int(resolution), 64)
    sun = _fmt(_SUN_DIR)
    # Shadow map 1024 px: at 512 px frames it looks the same as 2048 (edges a shade softer)
    # and has a quarter of the texels to fill, on a CPU renderer the bulk of a frame.s cost.
    # A directional light's shadow map is an orthographic box starting at the light's
    # position: put it high above the arena centre, up-sun, so every fence casts a shadow.
    sun_pos = _fmt(20.0 - 45.0 * d if k < 2 else -45.0 * d for k, d in enumerate(_SUN_DIR))
    return f"""<mujoco model="animal-ai">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="0.02" gravity="0 0 -9.81" integrator="Euler" iterations="30"
          ls_iterations="10" cone="pyramidal" sleep_tolerance="{SLEEP_TOLERANCE:g}">
    <flag warmstart="enable" sleep="enable"/>
  </option>
  <size memory="8M"/>
  <statistic extent="1" center="20 20 0"/>
  <visual>
    <global offwidth="{buf}" offheight="{buf}" fovy="43"/>
    <quality shadowsize="1024" offsamples="0"/>
    <map znear="0.01" zfar="70" shadowclip="32" shadowscale="0.9" haze="0"/>
    <headlight ambient="{_fmt(AMBIENT)}" diffuse="0 0 0" specular="0 0 0"/>
  </visual>
  <default>
    <geom friction="0.6 0 0" condim="3" solref="0.02 1" solimp="0.95 0.99 0.001"
          contype="3" conaffinity="7"/>
    <pair condim="1" solref="0.02 1" solimp="0.95 0.99 0.001"/>
    <default class="ground"><geom contype="1" conaffinity="1"/></default>
    <default class="pushable">
      <geom priority="1" friction="0.425 0 0" condim="1" contype="4" conaffinity="2"
            solimp="0.9999 0.9999 0.001"/>
    </default>
    <default class="movable">
      <geom priority="1" friction="0.6 0 0" condim="1" contype="2" conaffinity="2"
            solimp="0.9999 0.9999 0.001"/>
    </default>
    <default class="ball"><geom friction="0.6 0 0" condim="3"/></default>
    <default class="heavy"><geom friction="0.6 0 0" condim="3"/></default>
  </default>
  <asset>
    <texture name="sky" type="skybox" builtin="gradient" rgb1="0.40 0.53 0.79"
             rgb2="0.62 0.72 0.86" width="256" height="256"/>
    <texture name="floor" type="2d" file="floor.png"/>
    <texture name="fence" type="2d" file="fence.png"/>
    <texture name="brick" type="2d" file="brick.png"/>
    <texture name="crate" type="2d" file="crate.png"/>
    <material name="floor" texture="floor" texrepeat="5 5" texuniform="false" specular="0"
              rgba="1 1 1 1"/>
    <material name="fence" texture="fence" texrepeat="1.6 1.6" texuniform="true" specular="0"
              emission="0.55" rgba="0.66 0.72 0.77 1"/>
    <material name="rail" specular="0.2" emission="0.5" rgba="0.70 0.76 0.81 1"/>
    <material name="brick" texture="brick" texrepeat="1 1" texuniform="true" specular="0"/>
    <material name="glass" specular="0.3"/>
    <material name="ramp" specular="0"/>
    <material name="plain" specular="0"/>
    <material name="crate" texture="crate" texrepeat="1 1" texuniform="false" specular="0"/>
    <material name="plank" specular="0"/>
    <material name="zone" specular="0" emission="0.15"/>
    <material name="goal" specular="0.3" emission="0.6"/>
    {assets}
  </asset>
  <worldbody>
    <light name="sun" directional="true" pos="{sun_pos}" dir="{sun}" castshadow="true"
           diffuse="{_fmt(SUN)}" specular="0.1 0.1 0.1" ambient="0 0 0"/>
    {static}
    {bodies}
  </worldbody>
  <contact>{contacts}</contact>
</mujoco>
"""


def _png(rgb: np.ndarray) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8)).save(out, format="PNG")
    return out.getvalue()


def _floor_texture(n: int = 512) -> np.ndarray:
    """Sandy flagstones of a few sizes with dark grout (one repeat spans 8.4 m, as AAI's)."""
    rng = np.random.default_rng(7)
    img = np.empty((n, n, 3))
    base = np.array([222.0, 190.0, 140.0])
    img[:] = base
    rows = np.cumsum(rng.integers(n // 8, n // 4, size=12))
    rows = np.concatenate([[0], rows[rows < n - n // 16], [n]])
    for r0, r1 in zip(rows[:-1], rows[1:], strict=True):
        cols = np.cumsum(rng.integers(n // 6, n // 3, size=12)) + rng.integers(0, n // 6)
        cols = np.concatenate([[0], cols[cols < n - n // 16], [n]])
        for c0, c1 in zip(cols[:-1], cols[1:], strict=True):
            img[r0:r1, c0:c1] = base * rng.uniform(0.9, 1.04) + rng.normal(0, 3, 3)
            img[r0:r0 + 3, c0:c1] = (150, 120, 80)
            img[r0:r1, c0:c0 + 3] = (150, 120, 80)
    img += rng.normal(0, 4, img.shape)
    return img


def _fence_texture(n: int = 128) -> np.ndarray:
    """Pale boards: a light tile with thin darker seams (stripes on every fence face)."""
    img = np.full((n, n, 3), 238.0)
    img[:, :3] = 150.0
    img[:3, :] = 150.0
    return img


def _brick_texture(n: int = 256) -> np.ndarray:
    """White bricks with grey mortar; the geom colour tints them (magenta walls...)."""
    img = np.full((n, n, 3), 255.0)
    rows = 8
    h = n // rows
    for r in range(rows):
        img[r * h : r * h + 3, :] = 200.0
        offset = (h if r % 2 else 0)
        for c in range(offset, n + h, 2 * h):
            img[r * h : (r + 1) * h, max(c, 0) % n : (max(c, 0) % n) + 3] = 200.0
    return img


def _crate_texture(n: int = 128) -> np.ndarray:
    """AAI's cardbox look: a light frame around a darker inset panel on every face."""
    img = np.full((n, n, 3), 255.0)
    m = n // 7
    img[m:-m, m:-m] = 218.0
    return img


@functools.cache
def texture_assets() -> dict[str, bytes]:
    """PNG bytes of every texture the MJCF references (drawn once per process)."""
    return {
        "floor.png": _png(_floor_texture()),
        "fence.png": _png(_fence_texture()),
        "brick.png": _png(_brick_texture()),
        "crate.png": _png(_crate_texture()),
    }
