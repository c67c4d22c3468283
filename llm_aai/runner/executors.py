"""The suites a run's episodes can play on, by ``--executor``: threads here, or a Ray cluster.

One registry: planning checks a config against the chosen suite and settles it, and the run
builds its suite from the same entry.
"""

from __future__ import annotations

from llm_aai.runner.ray_suite import RaySuite
from llm_aai.runner.suite import Suite

SUITES: dict[str, type[Suite]] = {"local": Suite, "ray": RaySuite}
"""Where a run's episodes play, by ``--executor``: threads here, or Ray tasks on a cluster."""
