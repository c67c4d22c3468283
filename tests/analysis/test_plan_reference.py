"""The plan metrics' reference: the oracle's open-loop plan for the same task and seed.

Real testbed arenas, the real simulator, the real oracle, plan runs through the fake server.
"""

from __future__ import annotations

import dataclasses
import json
import logging

import pytest

from llm_aai.analysis.plan_reference import OracleReferences, oracle_plan
from llm_aai.cli.analyze import main as analyze_main
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import ModelOptions, RunConfig, start_run
from llm_aai.runner.suite import episode_seed
from llm_aai.script import Think, parse_script

TASK = "01-04-03"  # the agent at one end of the arena, a green ball in the far corner
PLAN = dataclasses.replace(PAPER_PROTOCOL, max_scripts=1)
SEED = episode_seed(RunConfig.seed, TASK, 1)  # the seed of a run's first trial of TASK


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The oracle plans' cache in a fresh folder, where analyze finds it by default."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "llm-aai" / "oracle-plans"


def _ask(references, testbed_dir):
    return references.plan_for(task_id=TASK, seed=SEED, pass_mark=0.0,
                               arena_path=testbed_dir / f"{TASK}.yaml", protocol=PLAN)


def test_the_oracles_plan_is_computed_once_then_read_from_the_cache(testbed_dir, cache, caplog):
    first = OracleReferences(budget=2000)
    reference = _ask(first, testbed_dir)
    assert reference.passed and 0 < reference.steps == reference.script.n_steps
    assert (first.computed, first.cached) == (1, 0)
    [entry] = cache.rglob("*.json")
    assert json.loads(entry.read_text())["task_id"] == TASK
    again = OracleReferences(budget=2000)
    assert _ask(again, testbed_dir) == reference and (again.computed, again.cached) == (0, 1)
    other_budget = OracleReferences(budget=1000)
    _ask(other_budget, testbed_dir)
    assert other_budget.computed == 1 and len(list(cache.rglob("*.json"))) == 2
    entry.write_text('{"text": "Go(")')  # damaged: a miss, computed and stored again
    with caplog.at_level(logging.WARNING):
        assert _ask(again, testbed_dir) == reference
    assert "unreadable" in caplog.text and again.computed == 1


def _plan_run(testbed_dir, out, run_id, reply=None, **changes):
    if reply is None:
        return start_run(RunConfig(tasks=TASK, arenas_dir=testbed_dir, resolution=64,
                                   prompt="plan", **changes),
                         out=out, run_id=run_id, show_progress=False).run_dir
    with FakeChatServer(default=reply) as server:
        config = RunConfig(model="openai/fake", tasks=TASK, arenas_dir=testbed_dir,
                           resolution=64, prompt="plan",
                           model_options=ModelOptions(api_base=server.url, max_tokens=512))
        return start_run(config, out=out, run_id=run_id, show_progress=False).run_dir


def _plan_rows(out: str) -> dict[str, dict[str, str]]:
    """The printed plan-metrics table: model -> column -> value."""
    lines = out.split("Plan metrics")[1].splitlines()
    header = lines[1].split()
    rows = {}
    for line in lines[3:]:
        if not line.strip() or line.startswith("reference plans"):
            break
        values = line.split()
        rows[values[0]] = dict(zip(header, values, strict=True))
    return rows


def test_a_plan_equal_to_the_oracles_scores_one_and_a_detour_scores_what_it_adds(
        testbed_dir, tmp_path, cache, capsys):
    oracle = oracle_plan(testbed_dir / f"{TASK}.yaml", seed=SEED, pass_mark=0.0, protocol=PLAN,
                         budget=2000)
    steps = oracle.steps
    assert oracle.passed and steps == parse_script(oracle.text).n_steps
    same = _plan_run(testbed_dir, tmp_path / "same", "same", oracle.text)
    # two more steps (a turn right and back), then the oracle's plan: it still passes
    detour = _plan_run(testbed_dir, tmp_path / "detour", "detour",
                       "Turn(6);Turn(-6);" + oracle.text)
    assert analyze_main([str(same), "--by", "observation", "--oracle-budget", "2000"]) == 0
    out = capsys.readouterr().out
    row = _plan_rows(out)["openai/fake"]
    assert (row["passed"], row["lcs"], row["command_f1"], row["path_efficiency"]) == \
        ("1.0", "1.0", "1.0", "1.0")
    assert "the oracle's (budget 2000 steps), 1 computed, 0 from the cache" in out
    assert analyze_main([str(detour), "--by", "observation", "--oracle-budget", "2000"]) == 0
    out = capsys.readouterr().out
    row = _plan_rows(out)["openai/fake"]
    commands = sum(not isinstance(c, Think) for c in parse_script(oracle.text).commands)
    assert row["passed"] == "1.0"
    assert float(row["lcs"]) == pytest.approx(steps / (steps + 2), abs=5e-4)
    assert float(row["path_efficiency"]) == pytest.approx(steps / (steps + 2), abs=5e-4)
    # precision: the oracle's commands of ours; recall: all of the oracle's
    assert float(row["command_f1"]) == pytest.approx(2 * commands / (2 * commands + 2),
                                                     abs=5e-4)
    assert "0 computed, 1 from the cache" in out


def test_an_oracle_plan_run_given_as_the_reference_gives_the_same_metrics(
        testbed_dir, tmp_path, cache, capsys):
    oracle_run = _plan_run(testbed_dir, tmp_path, "oracle", model="oracle", oracle_budget=2000)
    model_run = _plan_run(testbed_dir, tmp_path, "model", "Turn(-30);Go(20);Turn(6);Go(40);")
    assert analyze_main([str(model_run), "--by", "observation", "--oracle-budget", "2000"]) == 0
    on_demand = _plan_rows(capsys.readouterr().out)
    assert analyze_main([str(model_run), "--by", "observation", "--reference",
                         str(oracle_run)]) == 0
    out = capsys.readouterr().out
    assert _plan_rows(out) == on_demand
    assert f"the plans of run {oracle_run}" in out
    assert float(on_demand["openai/fake"]["lcs"]) < 1.0  # a different plan, scored
    image_run = start_run(RunConfig(model="heuristic", tasks=TASK, arenas_dir=testbed_dir,
                                    resolution=64), out=tmp_path, run_id="img",
                          show_progress=False).run_dir
    assert analyze_main([str(model_run), "--by", "observation", "--reference",
                         str(image_run)]) == 2
    assert "a reference run must be a plan run" in capsys.readouterr().err
    assert analyze_main([str(model_run), "--reference", str(oracle_run)]) == 2
