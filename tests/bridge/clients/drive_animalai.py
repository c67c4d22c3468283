"""Drive the bridge with whatever ``animalai`` the running Python has (3.0.x, 4.x or 6.x).

Run by the client-generation tests in that generation's own venv:
``python drive_animalai.py LAUNCHER PORT ARENA OUT.npz --seed S --resolution R --steps N``.
It plays a fixed action sequence and saves, as received: the observation shapes of the
behaviour spec, then per decision the camera array, health, reward and whether the episode
ended, plus the animalai and mlagents_envs versions. It closes the environment on every
path, so a failing client leaves no player behind.
"""

import argparse
import json
import sys

import mlagents_envs
import numpy as np
from mlagents_envs.base_env import ActionTuple

try:  # animalai 4.x and 6.x
    from animalai.environment import AnimalAIEnvironment
except ImportError:  # animalai 3.0.x
    from animalai.envs.environment import AnimalAIEnvironment

BEHAVIOR = "AnimalAI?team=0"
ACTIONS = [[1, 0], [1, 0], [0, 1], [1, 0], [0, 2], [1, 0], [2, 0], [1, 1]]
"""Forward, forward, turn right, forward, turn left, forward, back, forward-right, ..."""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("launcher")
    parser.add_argument("port", type=int)
    parser.add_argument("arena")
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resolution", type=int, default=64)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    env = AnimalAIEnvironment(file_name=args.launcher, base_port=args.port, seed=args.seed,
                              arenas_configurations=args.arena, resolution=args.resolution)
    try:
        spec = env.behavior_specs[BEHAVIOR]
        shapes = [list(o.shape) for o in spec.observation_specs]
        cameras, health, reward, done = [], [], [], []
        decision, _ = env.get_steps(BEHAVIOR)
        cameras.append(decision.obs[0][0])
        health.append(float(decision.obs[-1][0][0]))
        reward.append(0.0)
        done.append(False)
        for step in range(args.steps):
            action = np.array([ACTIONS[step % len(ACTIONS)]], dtype=np.int32)
            env.set_actions(BEHAVIOR, ActionTuple(discrete=action))
            env.step()
            decision, terminal = env.get_steps(BEHAVIOR)
            steps = terminal if len(terminal) else decision
            cameras.append(steps.obs[0][0])
            health.append(float(steps.obs[-1][0][0]))
            reward.append(float(steps.reward[0]))
            done.append(bool(len(terminal)))
        info = {"animalai": _version("animalai"), "mlagents_envs": mlagents_envs.__version__,
                "shapes": shapes}
        np.savez(args.out, cameras=np.stack(cameras), health=np.array(health),
                 reward=np.array(reward), done=np.array(done), info=json.dumps(info))
    finally:
        env.close()
    return 0


def _version(name: str) -> str:
    from importlib import metadata

    return metadata.version(name)


if __name__ == "__main__":
    sys.exit(main())
