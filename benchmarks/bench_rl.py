"""Benchmark for reinforcement-learning users: small observations, the gym env, the bridge.

Run from the repository root (``make bench`` runs it too)::

    python -m benchmarks.bench_rl [--arena PATH] [--steps N] [--resolution 84]

Every figure comes from this one run, with the renderer as users get it (Mesa rasterizing in
the caller's thread unless ``LP_NUM_THREADS`` is set), and the targets are ratios to the
physics measured alongside, not absolute times. Each figure is
the best of ``--rounds`` rounds (an observation: each view's fastest round), so that other
processes on a shared machine slow it less:

* an observation at 84 px, along a random walk (the views a random agent sees), costs at
  most 3 x one AAI step's physics + 1 ms;
* the gymnasium env (``AnimalAIEnv``) at 84 px takes >= 600 steps/s;
* ``animalai``'s ``AnimalAIEnvironment`` driving the bridge at 84 px takes >= 300 steps/s
  (two processes: the client and the player); its ratio to the gymnasium env of the same run
  is printed too, as a machine shared with others moves both alike (docs/bridge.md);
* the bridge's ceiling: animalai driving a player that skips the world after its first step
  (``benchmarks.bridge_ceiling``), what animalai and the serving cost alone. The two
  processes take turns, so the bridge should run at about ``1 / (1 / ceiling + 1 / env)``,
  printed beside it;
* a 512 px observation, what LLM runs use, is reported for comparison between versions
  (its renderer settings are those of before the small-frame work).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from llm_aai.arena.catalog import resolve_arena_path
from llm_aai.arena.placement import place_arena
from llm_aai.arena.yaml_io import load_config
from llm_aai.sim import Simulator

DEFAULT_TASK = "04-10-01"


def _loaded(path: Path, resolution: int, render: bool) -> tuple[Simulator, object, object]:
    sim = Simulator(max(resolution, 64), render=render)
    rng = np.random.default_rng(0)
    placed = place_arena(load_config(path).arena(), rng)
    sim.load(placed, rng)
    return sim, placed, rng


def physics_ms(path: Path, steps: int, rounds: int) -> float:
    """Milliseconds of physics per AAI step (3 physics steps), random actions."""
    sim, placed, rng = _loaded(path, 64, render=False)
    best = float("inf")
    for _ in range(rounds):
        actions = rng.integers(0, 3, size=(steps, 2)).tolist()
        start = time.perf_counter()
        for move, turn in actions:
            if sim.step(move, turn).done:
                sim.load(placed, rng)
        best = min(best, (time.perf_counter() - start) / steps * 1000)
    return best


def observation_ms(path: Path, frames: int, resolution: int, rounds: int) -> float:
    """Milliseconds per first-person observation along a random walk (the steps not counted).

    The agent takes random actions, as in the gymnasium-env round, and every round replays
    the same walk from the same start, so each round draws the same views; each view counts
    with its fastest round (on a shared machine a whole round is rarely spared by others).
    Why a random walk: what a frame costs depends on the view (the sky and the far fence
    cost more than a nearby wall), and an agent that only walked forward soon faced a wall,
    which made this figure 0.8-1.3 ms while the gymnasium env's frames cost about 1.9 ms
    (docs/bridge.md).
    """
    sim, placed, _ = _loaded(path, resolution, render=True)
    sim.observe()  # shaders compile on the first frame
    actions = np.random.default_rng(1).integers(0, 3, size=(frames, 2)).tolist()
    fastest = np.full(frames, np.inf)
    for _ in range(rounds):
        rng = np.random.default_rng(0)
        sim.load(placed, rng)
        for k, (move, turn) in enumerate(actions):
            if sim.step(move, turn).done:
                sim.load(placed, rng)
            start = time.perf_counter()
            sim.observe()
            fastest[k] = min(fastest[k], time.perf_counter() - start)
    sim.close()
    return float(fastest.mean()) * 1000


class GymRounds:
    """``AnimalAIEnv.step`` with random actions, resetting at episode ends."""

    def __init__(self, path: Path, resolution: int) -> None:
        from llm_aai.env import AnimalAIEnv

        self.env = AnimalAIEnv(path, resolution=resolution)
        self.env.reset(seed=0)
        self.env.action_space.seed(0)

    def rate(self, steps: int) -> float:
        """Steps per second over one round of ``steps``."""
        env = self.env
        start = time.perf_counter()
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
        return steps / (time.perf_counter() - start)

    def close(self) -> None:
        self.env.close()


class BridgeRounds:
    """``animalai``'s ``AnimalAIEnvironment`` with the bridge as its player.

    ``install`` writes the executable animalai launches (the bridge's launcher by default).
    """

    def __init__(self, path: Path, resolution: int,
                 install: Callable[[Path], Path] | None = None) -> None:
        import socket

        from animalai.environment import AnimalAIEnvironment

        if install is None:
            from llm_aai.bridge.launcher import install

        self._folder = tempfile.TemporaryDirectory()
        with socket.socket() as probe:
            probe.bind(("localhost", 0))
            port = probe.getsockname()[1]
        launcher = install(Path(self._folder.name) / "env")
        self.env = AnimalAIEnvironment(file_name=str(launcher), arenas_configurations=str(path),
                                       resolution=resolution, base_port=port)
        self.behavior = next(iter(self.env.behavior_specs))
        self._rng = np.random.default_rng(0)

    def rate(self, steps: int) -> float:
        """Steps per second over one round of ``steps``."""
        from mlagents_envs.base_env import ActionTuple

        actions = self._rng.integers(0, 3, size=(steps, 1, 2)).astype(np.int32)
        start = time.perf_counter()
        for action in actions:
            self.env.set_actions(self.behavior, ActionTuple(discrete=action))
            self.env.step()
        return steps / (time.perf_counter() - start)

    def close(self) -> None:
        self.env.close()
        self._folder.cleanup()


def side_by_side(path: Path, steps: int, resolution: int,
                 rounds: int) -> tuple[float, float, float]:
    """Best gymnasium-env, bridge and ceiling rates, their rounds interleaved so that all
    meet the same load on a shared machine (the ratios are then the bridge's own cost)."""
    from benchmarks import bridge_ceiling

    players: list = []
    try:
        players.append(GymRounds(path, resolution))
        players.append(BridgeRounds(path, resolution))
        players.append(BridgeRounds(path, resolution, install=bridge_ceiling.install))
        best = [0.0] * len(players)
        for _ in range(rounds):
            for k, player in enumerate(players):
                best[k] = max(best[k], player.rate(steps))
        gym_best, bridge_best, ceiling_best = best
        return gym_best, bridge_best, ceiling_best
    finally:
        for player in players:
            player.close()


def main(argv: list[str] | None = None) -> int:
    """Print the table with each figure beside its target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arena", type=Path, default=None, help="arena YAML to benchmark")
    parser.add_argument("--steps", type=int, default=300, help="env and bridge steps a round")
    parser.add_argument("--frames", type=int, default=100, help="observations a round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the best one counts")
    parser.add_argument("--resolution", type=int, default=84)
    args = parser.parse_args(argv)
    path = args.arena or resolve_arena_path(DEFAULT_TASK)
    rounds = args.rounds
    physics = physics_ms(path, 1000, rounds)
    small = observation_ms(path, args.frames, args.resolution, rounds)
    large = observation_ms(path, max(args.frames // 5, 1), 512, rounds)
    gym_rate, bridge_rate, ceiling = side_by_side(path, args.steps, args.resolution, rounds)
    expected = 1 / (1 / gym_rate + 1 / ceiling)
    budget = 3 * physics + 1.0
    res = args.resolution
    rows = [
        ("arena", path.name, ""),
        ("physics ms per AAI step", f"{physics:.3f}", ""),
        (f"ms per {res} px observation (random walk)", f"{small:.2f}",
         f"target <= 3 x physics + 1 = {budget:.2f}: {'met' if small <= budget else 'NOT met'}"),
        ("ms per 512 px observation (random walk)", f"{large:.2f}",
         "for comparison between versions"),
        (f"gymnasium env steps/s at {res} px", f"{gym_rate:,.0f}",
         f"target >= 600: {'met' if gym_rate >= 600 else 'NOT met'}"),
        (f"bridge steps/s via animalai at {res} px", f"{bridge_rate:,.0f}",
         f"target >= 300: {'met' if bridge_rate >= 300 else 'NOT met'}"),
        ("bridge / gymnasium env", f"{bridge_rate / gym_rate:.2f}",
         "same run: what the protocol and the second process cost, whatever the load"),
        (f"bridge's ceiling steps/s at {res} px", f"{ceiling:,.0f}",
         "animalai and the player's serving alone (no physics, no frame)"),
        ("bridge expected from env and ceiling", f"{expected:,.0f}",
         f"1 / (1 / env + 1 / ceiling); measured bridge / this = {bridge_rate / expected:.2f}"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:>10}  {goal}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
