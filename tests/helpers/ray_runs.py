"""What two runs are compared by when one played on Ray: their summary rows and their
episodes' turns and frames, the timing and where each episode ran left out."""

from __future__ import annotations

import csv
import json
from pathlib import Path

TIMING = {"duration_s", "node_id", "host"}  # and each call's latency in the turn logs


def summary_rows(run_dir: Path) -> list[dict[str, str]]:
    """The run's ``summary.csv`` rows."""
    with (Path(run_dir) / "summary.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def without_timing(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows without their timing and placement columns."""
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def episode_logs(run_dir: Path) -> dict[str, object]:
    """Every episode's turns (each call's latency left out) and frames, by episode."""
    logs = {}
    for episode in sorted((Path(run_dir) / "episodes").iterdir()):
        turns = [json.loads(line) for line in (episode / "turns.jsonl").read_text().splitlines()]
        for turn in turns:
            if turn.get("usage"):
                turn["usage"].pop("latency_s")
        frames = {path.name: path.read_bytes() for path in sorted(episode.glob("frames/*"))}
        logs[episode.name] = (turns, frames)
    return logs
