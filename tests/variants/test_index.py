"""variants.csv: folders made before variants recorded their build still read."""

from __future__ import annotations

import csv

import pytest

from llm_aai.variants.index import (
    COLUMNS,
    INDEX_FILE,
    LEGACY_COLUMNS,
    UNPLACED_COLUMNS,
    VariantIndexError,
    read_rows,
    read_variants,
)


def write_index(folder, columns, rows):
    with (folder / INDEX_FILE).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def test_an_index_without_builds_reads_as_checked_in_3x(tmp_path):
    (tmp_path / "01-04-03-v1.yaml").write_text("!ArenaConfig\narenas: {}\n", encoding="utf-8")
    write_index(tmp_path, LEGACY_COLUMNS, [
        {"variant_id": "01-04-03-v1", "parent": "01-04-03", "level": 1, "outcome": "kept",
         "seed": 7, "transformations": "mirror", "file": "01-04-03-v1.yaml"},
        {"variant_id": "", "parent": "01-21-01", "level": 1, "outcome": "rejected",
         "reason": "layout cannot be transformed", "seed": ""}])
    rows = read_rows(tmp_path)
    assert [row["physics_build"] for row in rows] == ["3.x", ""]
    assert all(row["node_id"] == row["host"] == "" for row in rows)
    (variant,) = read_variants(tmp_path)
    assert variant.physics_build == "3.x" and variant.parent == "01-04-03"


def test_an_index_with_another_header_names_the_file_and_line(tmp_path):
    write_index(tmp_path, (*COLUMNS[:-1], "path"), [])
    with pytest.raises(VariantIndexError, match=rf"{INDEX_FILE}:1: header"):
        read_rows(tmp_path)


def test_an_index_without_placement_reads_with_it_empty(tmp_path):
    (tmp_path / "01-04-03-v1.yaml").write_text("!ArenaConfig\narenas: {}\n", encoding="utf-8")
    write_index(tmp_path, UNPLACED_COLUMNS, [
        {"variant_id": "01-04-03-v1", "parent": "01-04-03", "level": 1, "outcome": "kept",
         "seed": 7, "physics_build": "2019", "file": "01-04-03-v1.yaml"}])
    (row,) = read_rows(tmp_path)
    assert list(row) == list(COLUMNS) and row["physics_build"] == "2019"
    assert (row["node_id"], row["host"]) == ("", "")
