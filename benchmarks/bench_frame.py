"""Where a small first-person frame's time goes, and what drawing it differently would save.

Run from the repository root::

    python -m benchmarks.bench_frame [--arena PATH] [--resolution 84] [--frames 300]

It records the states of a random walk (the walk of ``benchmarks.bench_rl``'s observation
figure), then draws each state once per variant, the variants interleaved so that all meet
the same load, and counts each state's fastest of ``--rounds`` draws. A variant either
leaves out a part of the scene (to see what that part costs) or is an option that would
make frames cheaper; each row says how many frames and pixels differ from the frames drawn
today. None of the variants is what the simulator draws: they are measurements
(docs/bridge.md, "The 84 px frame").
"""

from __future__ import annotations

import argparse
import copy
import os
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LP_NUM_THREADS", "1")  # as bench_rl: one rendering thread

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.bench_rl import DEFAULT_TASK, _loaded  # noqa: E402
from llm_aai.arena.catalog import resolve_arena_path  # noqa: E402
from llm_aai.sim.render import ArenaRenderer, shared_gl  # noqa: E402

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
    """A renderer of a copy of the model changed by ``edit`` (same bodies, same states)."""
    model = copy.deepcopy(renderer._model)
    edit(model)
    other = ArenaRenderer()
    other.bind(model)
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


def compare(sim, states: list[State], draws: dict[str, Draw], rounds: int) -> list[tuple]:
    """(variant, ms per frame, frames equal, pixels differing) for each variant; the first
    variant is the reference."""
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
        differing = sum(int((a != b).any(axis=2).sum())
                        for a, b in zip(frames[name], reference, strict=True))
        rows.append((name, best[name].mean() * 1000, equal, differing))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print each variant's cost per frame beside the frames it changes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arena", type=Path, default=None, help="arena YAML to benchmark")
    parser.add_argument("--resolution", type=int, default=84)
    parser.add_argument("--frames", type=int, default=300, help="states of the random walk")
    parser.add_argument("--rounds", type=int, default=5, help="draws per state and variant")
    args = parser.parse_args(argv)
    path = args.arena or resolve_arena_path(DEFAULT_TASK)
    size = args.resolution
    sim, placed, _ = _loaded(path, size, render=True)
    sim.observe()  # shaders compile on the first frame
    states = walk_states(sim, placed, args.frames)
    eye = sim._renderer
    skybox = {int(mujoco.mjtRndFlag.mjRND_SKYBOX): 0}
    rails, boxes = twin(eye, rails_as_boxes), twin(eye, flat_boxes)
    both = twin(eye, lambda model: (rails_as_boxes(model), flat_boxes(model)))
    draws = {
        "as drawn today": drawer(eye, size),
        "without the fence's rails": drawer(eye, size, hide=frozenset({"rail"})),
        "without the fence's boards": drawer(eye, size, hide=frozenset({"fence"})),
        "without the fence": drawer(eye, size, hide=frozenset({"rail", "fence"})),
        "without the sky": drawer(eye, size, flags=skybox),
        "option: rails as square bars": drawer(rails, size),
        "option: box faces as one quad": drawer(boxes, size),
        "option: both": drawer(both, size),
        "option: both, no sky": drawer(both, size, flags=skybox),
    }
    check = draws["as drawn today"](sim._data)
    if not np.array_equal(check, eye.eye(sim._data, size)):  # not observe(): blackouts
        raise RuntimeError("the benchmark's reference draw differs from ArenaRenderer.eye")
    rows = compare(sim, states, draws, args.rounds)
    print(f"{path.name}, {size} px, {len(states)} states of a random walk, "
          f"fastest of {args.rounds} draws each, load average {os.getloadavg()[0]:.1f}")
    width = max(len(row[0]) for row in rows)
    base = rows[0][1]
    print(f"{'variant':<{width}}  ms/frame  vs today  frames equal  pixels differing")
    for name, ms, equal, differing in rows:
        print(f"{name:<{width}}  {ms:8.3f}  {ms / base:7.2f}x  {equal:>5}/{len(states):<6}"
              f"  {differing:>16,}")
    for renderer in (rails, boxes, both):
        renderer.close()
    sim.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
