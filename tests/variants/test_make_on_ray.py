"""``variants make --executor ray`` on the two-node cluster (tests/conftest.py) makes what the
local executor makes: the same variant files and index rows, apart from where each ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_aai.cli.variants import main as make
from llm_aai.variants.index import INDEX_FILE, PLACEMENT_COLUMNS, read_rows

TASKS = ["01-04-03", "01-05-01", "01-06-02"]
FLAGS = ["--count", "1", "--seed", "5", "--workers", "2"]


def _files(folder: Path) -> dict[str, bytes]:
    """The folder's files and their bytes, the index aside (its rows are compared apart)."""
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())
            if path.name != INDEX_FILE}


def _unplaced(rows: list[dict]) -> list[dict]:
    """The rows without where they were made, in a fixed order."""
    return sorted(({k: v for k, v in row.items() if k not in PLACEMENT_COLUMNS} for row in rows),
                  key=lambda row: (row["parent"], row["variant_id"], row["outcome"]))


@pytest.mark.slow
def test_make_on_the_cluster_gives_what_it_gives_locally(ray_cluster, testbed_dir, tmp_path):
    ray = pytest.importorskip("ray")
    common = [*TASKS, *FLAGS, "--arenas-dir", str(testbed_dir)]
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert make(["make", *common, "--out", str(local)]) == 0
    assert make(["make", *common, "--out", str(on_ray), "--executor", "ray",
                 "--ray-address", ray_cluster.address]) == 0
    local_rows, ray_rows = read_rows(local), read_rows(on_ray)
    assert sum(row["outcome"] == "kept" for row in ray_rows) == len(TASKS)
    assert _unplaced(ray_rows) == _unplaced(local_rows)
    assert _files(on_ray) == _files(local)  # the variant files and the request, byte for byte
    assert {row["node_id"] for row in local_rows} == {"local"}
    nodes = {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    # one CPU per node and two tasks submitted at once: both nodes had to make variants
    placed = {row["node_id"] for row in ray_rows}
    assert len(placed) == 2 and placed <= nodes
    assert all(row["host"] for row in ray_rows)
