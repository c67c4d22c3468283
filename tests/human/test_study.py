"""A study's tasks, orders, participant ids and run settings."""

from __future__ import annotations

import csv

import pytest

from llm_aai.human.study import KEYS_MAX_REPLIES, Study, StudyError, check_participant_id
from llm_aai.variants.index import COLUMNS, INDEX_FILE

TASKS = "01-04-03,01-06-02,02-02-01,02-10-01,03-09-01"


def _study(tmp_path, testbed_dir, order="fixed"):
    return Study.create(out=tmp_path, tasks=TASKS, arenas_dir=testbed_dir, order=order)


def test_the_fixed_order_is_the_id_order_for_everyone(tmp_path, testbed_dir):
    study = _study(tmp_path, testbed_dir)
    assert study.order_for("a") == study.order_for("b") == tuple(sorted(TASKS.split(",")))


def test_a_shuffled_order_is_the_participants_own_and_repeatable(tmp_path, testbed_dir):
    study = _study(tmp_path, testbed_dir, "shuffled")
    orders = {study.order_for(f"p{n}") for n in range(8)}
    assert len(orders) > 1
    assert study.order_for("p1") == _study(tmp_path, testbed_dir, "shuffled").order_for("p1")
    assert sorted(study.order_for("p1")) == sorted(TASKS.split(","))


def test_keys_play_frame_control_without_a_script_cap(tmp_path, testbed_dir):
    study = _study(tmp_path, testbed_dir)
    keys = study.config("keys")
    assert keys.modes.control == "action" and keys.protocol.max_scripts is None
    assert keys.protocol.max_replies == KEYS_MAX_REPLIES
    assert study.config("script").protocol.max_scripts == 30
    with pytest.raises(StudyError, match="interface must be one of script, keys"):
        study.config("mouse")


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "-lead", "x" * 65, "sp ace", "é"])
def test_a_participant_id_that_cannot_name_a_folder_is_refused(bad):
    with pytest.raises(StudyError, match="participant id must be 1 to 64"):
        check_participant_id(bad)


def test_an_unknown_task_or_missing_arena_is_said_before_serving(tmp_path, testbed_dir):
    with pytest.raises(StudyError, match="99-99-99"):
        Study.create(out=tmp_path, tasks="99-99-99", arenas_dir=testbed_dir)
    with pytest.raises(StudyError, match="01-04-03"):
        Study.create(out=tmp_path, tasks="01-04-03", arenas_dir=tmp_path)
    with pytest.raises(StudyError, match="order must be one of"):
        Study.create(out=tmp_path, tasks="01-04-03", arenas_dir=testbed_dir, order="random")


def test_a_participants_run_is_continued_once_released_and_never_opened_twice(tmp_path,
                                                                             testbed_dir):
    study = _study(tmp_path, testbed_dir)
    run = study.open("p1", "script")
    with pytest.raises(StudyError, match="another process is running"):
        study.open("p1", "script")  # held by its session
    keys = study.open("p1", "keys")  # the other interface is another run
    run.close()
    again = study.open("p1", "script")  # taken up again: the same run, its levels left
    assert again.run_dir == run.run_dir
    assert again.spec("01-04-03", 1).episode_id == "01-04-03_t1"
    again.close()
    keys.close()


def test_a_study_of_variants_plays_each_kept_variant_as_its_run_would(tmp_path, testbed_dir):
    variants = tmp_path / "variants"
    variants.mkdir()
    arena = (testbed_dir / "01-04-03.yaml").read_text(encoding="utf-8")
    (variants / "01-04-03-v1.yaml").write_text(arena, encoding="utf-8")
    with (variants / INDEX_FILE).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerow({"variant_id": "01-04-03-v1", "parent": "01-04-03", "level": 1,
                         "outcome": "kept", "seed": 7, "transformations": "mirror",
                         "file": "01-04-03-v1.yaml", "physics_build": "3.x"})
    study = Study.create(out=tmp_path / "out", tasks="01-04-03", variants=variants,
                         resolution=64)
    assert study.tasks == ("01-04-03-v1",)
    run = study.open("p1", "script")
    assert run.spec("01-04-03-v1", 1).parent_task == "01-04-03"
    with pytest.raises(StudyError, match="no kept variant"):
        Study.create(out=tmp_path / "out", tasks="01-06-02", variants=variants)
