"""Replay the Unity tutorial recording in our simulator and in PhysX 4.1, script by script.

Why: Unity's Animal-AI build runs PhysX 4.1 and cannot run here. SAPIEN 2.2 ships PhysX
4.1.1, so the recording's arena, rebuilt collider for collider in PhysX with AAI's agent logic,
is an independent second opinion on our MuJoCo simulator: where the two agree, our contact
model is not the issue; where they differ, the recording's frames say which is closer. It is
not ground truth: see README.md for what PhysX 4.1 does that Unity did not.

Usage (from the repository root, with the PhysX environment from README.md):

    .venv/bin/python tools/physx_crosscheck/crosscheck.py --physx-python .venv-physx/bin/python

Prints one row per script: our agent's (x, z), PhysX's, the distance between them, and the
goals each touched; ``--csv`` also writes the table. ``--contacts N`` then lists every physics
step of script N in PhysX: the agent's speed and the normal impulse each body gave it, beside
the agent's weight per step (100 kg x 9.81 x 0.02 s = 19.6 N s).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from llm_aai.calibration import fidelity  # noqa: E402
from llm_aai.protocol import PAPER_PROTOCOL  # noqa: E402
from llm_aai.script import parse_script  # noqa: E402

DEFAULT_RECORDING = REPO.parent / "shared" / "fixtures" / "unity-tutorial-recording"
WALL_NAMES = {"Wall", "WallTransparent"}
CARDBOX_FRICTION = 0.25  # LowFriction material; PhysX averages it with the other side's 0.6
WALL_MASS = 10000.0
WEIGHT_IMPULSE = 100.0 * 9.81 * 0.02  # N s per physics step: what the floor must carry


def export_scene(recording: Path, seed: int = 0) -> dict:
    """The recording's arena as PhysX colliders (MuJoCo world frame, z up) plus its actions."""
    import mujoco

    from llm_aai.arena.placement import place_arena
    from llm_aai.arena.yaml_io import load_config
    from llm_aai.sim.scene import build_scene

    arena = load_config(recording / "arena.yaml").arena()
    rng = np.random.default_rng(seed)
    placed = place_arena(arena, rng)
    scene = build_scene(placed, resolution=64)
    model = mujoco.MjModel.from_xml_string(scene.xml, scene.assets)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    goals = {g.geom: {"name": g.name, "multi": bool(g.spec.multi)} for g in scene.goals}
    colliders = []
    for g in range(model.ngeom):
        if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0:
            continue
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g)
        body = int(model.geom_bodyid[g])
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, data.geom_xmat[g])
        geom_type = model.geom_type[g]
        size = model.geom_size[g]
        position = data.geom_xpos[g].tolist()
        entry = {"name": name, "quat": quat.tolist(), "friction": 0.6, "mass": 0.0}
        if name == "floor":
            entry.update(shape="box", kind="static", half_size=[21.0, 21.0, 0.5],
                         position=[20.0, 20.0, -0.51])
        elif geom_type == mujoco.mjtGeom.mjGEOM_SPHERE:
            kind = "agent" if name == "agent" else "dynamic"
            entry.update(shape="sphere", kind=kind, half_size=[float(size[0])] * 3,
                         position=position, mass=float(model.body_mass[body]))
            if kind == "agent":
                entry["quat"] = [1.0, 0.0, 0.0, 0.0]
        elif geom_type == mujoco.mjtGeom.mjGEOM_BOX:
            entry.update(shape="box", half_size=size.tolist(), position=position)
            if body != 0:
                entry.update(kind="dynamic", mass=float(model.body_mass[body]),
                             friction=CARDBOX_FRICTION)
            elif name.startswith("obj") and placed.objects[int(name[3:])].spec.name in WALL_NAMES:
                # AAI's Walls are dynamic 10000 kg rigidbodies resting on the floor.
                entry.update(kind="dynamic", mass=WALL_MASS)
                entry["position"][2] = size[2] - 0.01
            else:
                entry["kind"] = "static"  # the fence
        else:
            raise SystemExit(f"{name}: only box and sphere colliders are exported "
                             f"(MuJoCo geom type {geom_type}); this arena cannot be cross-checked")
        colliders.append(entry)
    start = PAPER_PROTOCOL
    warmup = [[0, 0]] * (start.steps_after_reset + start.initial_observations
                         * start.noops_after_initial_observation)  # the protocol's start
    scripts = [{"index": 0, "actions": warmup}]
    for script in fidelity.read_recording(recording):
        scripts.append({"index": script.index,
                        "actions": [list(a) for a in parse_script(script.text).actions()]})
    return {"colliders": colliders, "agent_yaw": float(placed.agent.yaw), "goals": goals,
            "scripts": scripts}


def ours(recording: Path, seed: int = 0) -> dict[int, dict]:
    """Our agent's position and touched goals after every script."""
    rows = {}

    def after(replay, sim):
        x, _y, z = sim.state.position
        rows[replay.index] = {"x": x, "z": z, "yaw": sim.state.yaw,
                              "goals": [e.kind for e in replay.events]}

    fidelity.replay_recording(recording, seed=seed, after_script=after)
    return rows


def physx(spec: dict, python: str, watched: int | None = None) -> tuple[dict[int, dict], list]:
    """Run physx_replay.py in the PhysX environment.

    Returns one row per script, and one per physics step of script ``watched``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scene.json"
        path.write_text(json.dumps(spec))
        command = [python, str(Path(__file__).with_name("physx_replay.py")), str(path)]
        if watched is not None:
            command.append(str(watched))
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"physx_replay.py failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    rows, steps = {}, []
    for line in done.stdout.splitlines():
        row = json.loads(line)
        if "physics_step" in row:
            steps.append(row)
            continue
        rows[row["script"]] = {"x": row["x"], "z": row["z"], "yaw": row["yaw"],
                               "goals": [e["goal"] for e in row["events"]]}
    return rows, steps


def print_contacts(watched: int, steps: list) -> None:
    """The agent's speed and the normal impulses on it, per physics step of one script."""
    if not steps:
        print(f"\nscript {watched}: not reached in PhysX")
        return
    print(f"\nscript {watched} in PhysX, per physics step: agent speed and the normal impulse "
          f"each body gave it (N s; its weight is {WEIGHT_IMPULSE:.1f} per step)")
    for row in steps:
        speed = math.hypot(row["vx"], row["vz"])
        impulses = "  ".join(f"{name} {value:6.1f}"
                             for name, value in sorted(row["normal_impulses"].items()))
        print(f"{row['physics_step']:>6} move {row['move']} turn {row['turn']} "
              f"{speed:6.2f} m/s  {impulses}")


def main(argv: list[str] | None = None) -> int:
    """Run both replays and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--physx-python", required=True,
                        help="python of the environment with sapien==2.2.2 (see README.md)")
    parser.add_argument("--recording", type=Path, default=DEFAULT_RECORDING)
    parser.add_argument("--csv", type=Path, help="also write the table here")
    parser.add_argument("--contacts", type=int, metavar="SCRIPT",
                        help="also list PhysX's contact impulses on the agent in this script")
    args = parser.parse_args(argv)
    spec = export_scene(args.recording)
    theirs, steps = physx(spec, args.physx_python, args.contacts)
    mine = ours(args.recording)
    table = []
    print(f"{'script':>6} {'ours (x, z)':>18} {'PhysX 4.1 (x, z)':>18} {'apart m':>8}  "
          "goals ours | PhysX")
    for index in sorted(mine):
        a, b = mine[index], theirs.get(index)
        if b is None:
            break
        apart = math.hypot(a["x"] - b["x"], a["z"] - b["z"])
        goals = f"{','.join(a['goals']) or '-'} | {','.join(b['goals']) or '-'}"
        print(f"{index:>6} ({a['x']:7.3f}, {a['z']:7.3f}) ({b['x']:7.3f}, {b['z']:7.3f}) "
              f"{apart:8.3f}  {goals}")
        table.append({"script": index, "ours_x": a["x"], "ours_z": a["z"], "physx_x": b["x"],
                      "physx_z": b["z"], "apart_m": apart, "ours_goals": ";".join(a["goals"]),
                      "physx_goals": ";".join(b["goals"])})
    if args.csv:
        with args.csv.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
    if args.contacts is not None:
        print_contacts(args.contacts, steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
