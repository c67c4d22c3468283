"""``analyze --by observation``: one model's pass rate per level under each probe."""

from __future__ import annotations

import pandas as pd

from llm_aai.analysis.load import probe_of
from llm_aai.analysis.probes import probe_table
from llm_aai.cli.analyze import main as analyze_main
from llm_aai.runner import RunConfig, start_run


def test_probe_names_come_from_the_prompt_and_the_observation():
    assert probe_of("react", None) == "image"  # runs from before the probes
    assert probe_of("react", {"observation": "text", "frame": "egocentric"}) == "text"
    assert probe_of("react", {"observation": "both", "frame": "allocentric"}) == \
        "both (allocentric)"
    assert probe_of("plan", {"observation": "text"}) == "plan"


def test_the_table_has_a_column_per_probe_and_leaves_out_infrastructure_failures():
    episodes = pd.DataFrame({
        "model": ["m"] * 5, "level": [1, 1, 1, 1, 2],
        "probe": ["image", "image", "text", "plan", "text"],
        "passed": [True, False, True, False, False],
        "infra_failure": [False, False, False, False, True],
    })
    table = probe_table(episodes)
    assert list(table.columns) == ["model", "level", "level_name", "image", "text", "plan"]
    first = table.iloc[0]
    assert first["image"].startswith("1/2 0.50") and first["text"].startswith("1/1 1.00")
    assert first["plan"].startswith("0/1 0.00")
    assert table.iloc[1]["text"] == "-" and table.iloc[1]["image"] == "-"


def test_analyze_by_observation_on_real_runs(testbed_dir, tmp_path, capsys):
    for name, changes in (("img", {}), ("txt", {"observation": "text"}),
                          ("plan", {"prompt": "plan"})):
        start_run(RunConfig(model="heuristic", tasks="01-04-03", arenas_dir=testbed_dir,
                            resolution=64, **changes),
                  out=tmp_path, run_id=name, show_progress=False)
    csv = tmp_path / "probes.csv"
    status = analyze_main([str(tmp_path / n) for n in ("img", "txt", "plan")]
                          + ["--by", "observation", "--csv", str(csv)])
    assert status == 0
    out = capsys.readouterr().out
    assert "image" in out and "text" in out and "plan" in out
    plan_table = out.split("Plan metrics")[1].splitlines()
    header, row = plan_table[1].split(), plan_table[3].split()
    assert header[:4] == ["level", "episodes", "executable", "passed"]
    assert "wall_hit" in header and "lcs" in header
    assert row[:3] == ["1", "1", "1.0"]  # the heuristic's one-script plan parsed
    table = pd.read_csv(csv)
    assert list(table.columns) == ["model", "level", "level_name", "image", "text", "plan"]
    assert table.iloc[0]["text"].startswith("1/1")  # the heuristic reads its way to the ball
    assert analyze_main([str(tmp_path / "img"), "--by", "observation", "--plot",
                         str(tmp_path / "f.png")]) == 2  # a usage error, with its reason
