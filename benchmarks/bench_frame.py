"""Where a small first-person frame's time goes, and what drawing it differently would save.

Run from the repository root::

    python -m benchmarks.bench_frame [--arena PATH] [--resolution 84] [--frames 300]
                                     [--tessellation]

It records the states of a random walk (the walk of ``benchmarks.bench_rl``'s observation
figure), then draws each state once per variant, the variants interleaved so that all meet
the same load, and counts each state's fastest of ``--rounds`` draws. A variant either
leaves out a part of the scene (to see what that part costs) or is an option that would
make frames cheaper; each row says how many frames and pixels differ from the first, the
frame with its sky drawn by MuJoCo. Under 128 px the renderer lays its sky in from a picture
instead (``llm_aai.sim.render.lays_in_sky``): that is the second row, what the simulator
draws. With
``--tessellation`` the variants are instead meshes of other detail for curved
geoms and box faces (MuJoCo's ``visual/quality``), the measurement behind
``llm_aai.sim.render.curve_tessellation``. The other variants are measurements, not what the
simulator draws (docs/bridge.md, "The 84 px frame").
"""

from __future__ import annotations

import argparse
import copy
import os
import time
from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np

from benchmarks.bench_rl import DEFAULT_TASK, _loaded
from llm_aai.arena.catalog import resolve_arena_path
from llm_aai.sim.render import ArenaRenderer, lays_in_sky, shared_gl

_HIDDEN = int(mujoco.mjtGeom.mjGEOM_NONE)  # a geom of this type is skipped by mjr_render
State = tuple[np.ndarray, np.ndarray, np.ndarray]
Draw = Callable[[object], np.ndarray]


def walk_states(sim, placed, frames: int) -> list[State]:
    """The poses (qpos and mocap) after each step of bench_rl's random walk."""
    rng = np.random.default_rng(0)
    sim.load(placed, rng)
    states = []
    for move, turn in np.random.default_rng(1).integers(0, 3, size=(frames, 2)).tolist():
        if sim.step(move, turn).done:
            sim.load(placed, rng)
        data = sim._data
        states.append((data.qpos.copy(), data.mocap_pos.copy(), data.mocap_quat.copy()))
    return states


def drawer(renderer: ArenaRenderer, size: int, *, hide: frozenset[str] = frozenset(),
           flags: dict[int, int] | None = None) -> Draw:
    """A frame as ``ArenaRenderer.eye`` draws it, optionally without the geoms whose model
    names start with one of ``hide`` or with other scene flags."""
    model, scene = renderer._model, renderer._scene
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, i) or ""
             for i in range(model.ngeom)]
    hidden = {i for i, name in enumerate(names) if hide and name.startswith(tuple(hide))}
    geoms = scene.geoms  # views into the scene's memory, rewritten by each update
    rect = mujoco.MjrRect(0, 0, size, size)
    pixels = np.empty((size, size, 3), dtype=np.uint8)

    def draw(data) -> np.ndarray:
        saved = {flag: scene.flags[flag] for flag in flags or {}}
        for flag, value in (flags or {}).items():
            scene.flags[flag] = value
        mujoco.mjv_updateScene(model, renderer._pose(data), renderer._eye_option, None,
                               renderer._eye_camera, mujoco.mjtCatBit.mjCAT_ALL, scene)
        for k in range(scene.ngeom):  # every variant pays for this loop, hiding or not
            if geoms[k].objid in hidden and geoms[k].objtype == mujoco.mjtObj.mjOBJ_GEOM:
                geoms[k].type = _HIDDEN
        with shared_gl():
            mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, renderer._ctx)
            mujoco.mjr_render(rect, scene, renderer._ctx)
            mujoco.mjr_readPixels(pixels, None, rect, renderer._ctx)
        for flag, value in saved.items():
            scene.flags[flag] = value
        return pixels[::-1].copy()

    return draw


def twin(renderer: ArenaRenderer, edit: Callable[[mujoco.MjModel], None]) -> ArenaRenderer:
    """A renderer of a copy of the model changed by ``edit`` (same bodies, same states).

    The edit comes after ``bind``, which sets the meshes' tessellation for the frame size,
    and the context is built again from the edited model.
    """
    model = copy.deepcopy(renderer._model)
    other = ArenaRenderer()
    other.bind(model)
    edit(model)
    other._make_context()
    other._scene.flags[:] = renderer._scene.flags[:]
    return other


def rails_as_boxes(model: mujoco.MjModel) -> None:
    """The fence's round rails (capsules: about 1,800 triangles each) as square bars."""
    for i in range(model.ngeom):
        if (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, i) or "").startswith("rail"):
            radius, half = model.geom_size[i][:2]
            model.geom_type[i] = mujoco.mjtGeom.mjGEOM_BOX
            model.geom_size[i] = (radius, radius, half + radius)


def flat_boxes(model: mujoco.MjModel) -> None:
    """Box faces as one quad each instead of 4 x 4 (``visual/quality numquads``)."""
    model.vis.quality.numquads = 1


def tessellation(slices: int = 28, stacks: int = 16, quads: int = 4) -> Callable:
    """An edit drawing curved geoms (capsules, cylinders, spheres) with ``slices`` around and
    ``stacks`` along, and box faces as ``quads`` x ``quads`` (MuJoCo's defaults 28, 16, 4)."""

    def edit(model: mujoco.MjModel) -> None:
        quality = model.vis.quality
        quality.numslices, quality.numstacks, quality.numquads = slices, stacks, quads

    return edit


TESSELLATIONS = {
    "MuJoCo's meshes (28 x 16, 4)": tessellation(),
    "numslices 16": tessellation(16),
    "numslices 12": tessellation(12),
    "numslices 8": tessellation(8),
    "numstacks 8": tessellation(stacks=8),
    "numstacks 4": tessellation(stacks=4),
    "numslices 16, numstacks 8": tessellation(16, 8),
    "numslices 12, numstacks 8": tessellation(12, 8),
    "numslices 12, numstacks 4": tessellation(12, 4),
    "numslices 8, numstacks 4": tessellation(8, 4),
    "numquads 2": tessellation(quads=2),
    "numquads 1": tessellation(quads=1),
}
"""The candidates of ``--tessellation``: MuJoCo's render-only meshes of geometric
primitives (the collision detector uses the analytic shapes, MuJoCo's XML reference on
``visual/quality``). Frames under ``SMALL_FRAME`` are drawn with 16 slices and 8 stacks
(``llm_aai.sim.render.curve_tessellation``), so "with the sky drawn" is that row at 84 px and
the first candidate is how every frame was drawn before."""


VISIBLE = 16
"""A pixel whose largest channel differs by more than this counts as a visible change;
most changed pixels of the sky's gradient differ by one level."""


def compare(sim, states: list[State], draws: dict[str, Draw], rounds: int) -> list[tuple]:
    """(variant, ms per frame, frames equal, pixels differing, pixels differing by more than
    ``VISIBLE``) for each variant; the first variant is the reference."""
    data = sim._data
    best = {name: np.full(len(states), np.inf) for name in draws}
    frames: dict[str, list[np.ndarray]] = {name: [] for name in draws}
    order = list(draws)
    for rnd in range(rounds):
        for k, (qpos, mocap_pos, mocap_quat) in enumerate(states):
            data.qpos[:], data.mocap_pos[:], data.mocap_quat[:] = qpos, mocap_pos, mocap_quat
            for name in order if (rnd + k) % 2 == 0 else order[::-1]:
                start = time.perf_counter()
                frame = draws[name](data)
                best[name][k] = min(best[name][k], time.perf_counter() - start)
                if rnd == 0:
                    frames[name].append(frame)
    reference = frames[order[0]]
    rows = []
    for name in order:
        equal = sum(np.array_equal(a, b) for a, b in zip(frames[name], reference, strict=True))
        gaps = [np.abs(a.astype(np.int16) - b).max(axis=2)
                for a, b in zip(frames[name], reference, strict=True)]
        differing = sum(int((gap > 0).sum()) for gap in gaps)
        visible = sum(int((gap > VISIBLE).sum()) for gap in gaps)
        rows.append((name, best[name].mean() * 1000, equal, differing, visible))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print each variant's cost per frame beside the frames it changes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arena", type=Path, default=None, help="arena YAML to benchmark")
    parser.add_argument("--resolution", type=int, default=84)
    parser.add_argument("--frames", type=int, default=300, help="states of the random walk")
    parser.add_argument("--rounds", type=int, default=5, help="draws per state and variant")
    parser.add_argument("--tessellation", action="store_true",
                        help="measure coarser meshes of curves and boxes instead of the parts")
    args = parser.parse_args(argv)
    path = args.arena or resolve_arena_path(DEFAULT_TASK)
    size = args.resolution
    sim, placed, _ = _loaded(path, size, render=True)
    sim.observe()  # shaders compile on the first frame
    states = walk_states(sim, placed, args.frames)
    eye = sim._renderer
    skybox = {int(mujoco.mjtRndFlag.mjRND_SKYBOX): 0}
    draws = {"with the sky drawn": drawer(eye, size)}
    if lays_in_sky(size) and not args.tessellation:
        draws["sky laid in (ArenaRenderer.eye)"] = lambda data: eye.eye(data, size)
    if args.tessellation:
        twins = {name: twin(eye, edit) for name, edit in TESSELLATIONS.items()}
        draws.update({name: drawer(other, size) for name, other in twins.items()})
    else:
        rails, boxes = twin(eye, rails_as_boxes), twin(eye, flat_boxes)
        both = twin(eye, lambda model: (rails_as_boxes(model), flat_boxes(model)))
        twins = {"rails": rails, "boxes": boxes, "both": both}
        draws.update({
            "without the fence's rails": drawer(eye, size, hide=frozenset({"rail"})),
            "without the fence's boards": drawer(eye, size, hide=frozenset({"fence"})),
            "without the fence": drawer(eye, size, hide=frozenset({"rail", "fence"})),
            "without the sky": drawer(eye, size, flags=skybox),
            "option: rails as square bars": drawer(rails, size),
            "option: box faces as one quad": drawer(boxes, size),
            "option: both": drawer(both, size),
            "option: both, no sky": drawer(both, size, flags=skybox),
        })
    check = draws["with the sky drawn"](sim._data)
    drawn = eye._draw(sim._data, size, eye._eye_camera, eye._eye_option)  # its sky drawn
    if not np.array_equal(check, drawn):
        raise RuntimeError("the benchmark's reference draw differs from ArenaRenderer's")
    rows = compare(sim, states, draws, args.rounds)
    print(f"{path.name}, {size} px, {len(states)} states of a random walk, "
          f"fastest of {args.rounds} draws each, load average {os.getloadavg()[0]:.1f}")
    width = max(len(row[0]) for row in rows)
    base = rows[0][1]
    print(f"{'variant':<{width}}  ms/frame  vs first  frames equal  pixels differing"
          f"  by > {VISIBLE}")
    for name, ms, equal, differing, visible in rows:
        print(f"{name:<{width}}  {ms:8.3f}  {ms / base:7.2f}x  {equal:>5}/{len(states):<6}"
              f"  {differing:>16,}  {visible:>7,}")
    for renderer in twins.values():
        renderer.close()
    sim.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
