import pytest
from PIL import Image

from llm_aai.analysis import load_runs, pass_rates, plot_pass_rates, reference_populations
from llm_aai.cli.analyze import main as analyze


@pytest.fixture(scope="module")
def levels(two_models):
    return pass_rates(load_runs(two_models, with_turns=False).episodes)


def test_png_is_a_12_by_5_inch_figure(levels, tmp_path):
    path = plot_pass_rates(levels, reference_populations(), tmp_path / "fig.png")
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size == (1800, 750)  # 12 x 5 in at 150 dpi
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert len(colours) > 50  # bars, boxes, text: not a blank canvas
    assert 20_000 < path.stat().st_size < 2_000_000


@pytest.mark.parametrize("suffix", [".svg", ".pdf"])
def test_vector_formats_follow_the_extension(levels, tmp_path, suffix):
    path = plot_pass_rates(levels, reference_populations(), tmp_path / f"fig{suffix}",
                           populations=("children", "children_all", "olympics_top10"))
    head = path.read_bytes()[:200]
    assert (b"<svg" in head or b"<?xml" in head) if suffix == ".svg" else head.startswith(b"%PDF")


def test_svg_names_levels_models_and_populations(levels, tmp_path):
    text = plot_pass_rates(levels, reference_populations(), tmp_path / "fig.svg").read_text()
    for needle in ("Food Retrieval", "Generalisation", "Causal", "alpha", "beta", "Children 6-10",
                   "Olympics 2019 top 10", "Proportion of trials passed"):
        assert needle in text, needle


def test_a_subset_of_levels(tmp_path, make_run):
    run = make_run(tmp_path, model="m", levels=range(1, 4))
    levels = pass_rates(load_runs([run], with_turns=False).episodes)
    path = plot_pass_rates(levels, reference_populations(), tmp_path / "three.svg")
    text = path.read_text()
    assert "Obstacles" in text and "Preferences" in text and "Avoidance" not in text


def test_unknown_format_is_refused(levels, tmp_path):
    with pytest.raises(ValueError, match=r"fig\.jpg: figure format must be one of"):
        plot_pass_rates(levels, reference_populations(), tmp_path / "fig.jpg")



def always(task_id, level, trial):
    return True


def test_a_model_without_results_is_left_out_with_a_warning(two_models, tmp_path, make_run):
    down = make_run(tmp_path, model="down", infra=always, levels=range(1, 3), trials=range(1, 2))
    levels = pass_rates(load_runs([*two_models, down], with_turns=False).episodes)
    with pytest.warns(UserWarning, match=r"model 'down' left out of the figure: none of its "
                                         r"trials has a result \(8 episode\(s\) lost"):
        path = plot_pass_rates(levels, reference_populations(), tmp_path / "fig.svg")
    text = path.read_text()
    assert "alpha (n=" in text and "beta (n=" in text and "down (n=" not in text


def test_no_model_with_results_is_a_value_error(tmp_path, make_run):
    down = make_run(tmp_path, model="down", infra=always, levels=range(1, 2), trials=range(1, 2))
    levels = pass_rates(load_runs([down], with_turns=False).episodes)
    with pytest.warns(UserWarning, match="'down' left out"), \
            pytest.raises(ValueError, match="no model has a trial with a result"):
        plot_pass_rates(levels, reference_populations(), tmp_path / "fig.svg")
    assert not (tmp_path / "fig.svg").exists()


def test_analyze_reports_the_model_left_out_and_refuses_an_empty_figure(tmp_path, make_run,
                                                                       capsys):
    down = make_run(tmp_path, model="down", infra=always, levels=range(1, 2), trials=range(1, 2))
    up = make_run(tmp_path, model="up", levels=range(1, 2), trials=range(1, 2))
    assert analyze([str(down), str(up), "--plot", str(tmp_path / "fig.png")]) == 0
    out = capsys.readouterr().out
    assert "note: model 'down' left out of the figure" in out
    assert f"figure written to {tmp_path / 'fig.png'}" in out

    assert analyze([str(down), "--plot", str(tmp_path / "none.png")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"error: {tmp_path / 'none.png'}: no figure written: no model "
                                "has a trial with a result to plot (every episode was lost to "
                                "infrastructure, or there are none)"]
