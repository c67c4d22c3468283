import pytest
from PIL import Image

from llm_aai.analysis import load_runs, pass_rates, plot_pass_rates, reference_populations


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
