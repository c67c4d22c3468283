"""Procedural variants of the testbed tasks: fresh instances that keep each task's logic.

The 900 testbed files are public and fixed, so a model may have seen them. A variant is the
same task transformed (``transforms``: mirrored, turned, shifted, jittered, walls recoloured,
a symmetric choice swapped), written as an ordinary arena file and kept only after the real
placer and simulator show it is the same task (``validation``: it places whole, it is new,
the oracle solves it, the heuristic agent passes it iff it passes the parent). ``generate``
makes them into a folder with the index ``variants.csv`` (``index``), which ``run --variants``
plays and ``analyze`` compares with the originals.
"""

from llm_aai.variants.generate import (
    MAX_COUNT,
    MakeSettings,
    TaskOutcome,
    VariantRequestError,
    make_variants,
)
from llm_aai.variants.index import (
    INDEX_FILE,
    Variant,
    VariantIndexError,
    read_rows,
    read_variants,
    rejection_counts,
)
from llm_aai.variants.validation import REASONS, ValidationSettings

__all__ = ["INDEX_FILE", "MAX_COUNT", "REASONS", "MakeSettings", "TaskOutcome", "Variant",
           "VariantIndexError", "VariantRequestError", "ValidationSettings", "make_variants",
           "read_rows", "read_variants", "rejection_counts"]
