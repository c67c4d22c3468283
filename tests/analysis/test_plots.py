import shutil

import pytest
from PIL import Image

from llm_aai.analysis import (
    load_runs,
    model_summary,
    pass_rates,
    plot_pass_rates,
    reference_populations,
)
from llm_aai.analysis.plots import parse_size, settings_caption
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
    assert "alpha: pass rate" in text and "beta: pass rate" in text and "down:" not in text


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


@pytest.mark.parametrize("size, pixels", [
    ("single", (1050, 780)),   # 3.5 in wide at 300 dpi, at least 2.6 in high
    ("double", (2148, 990)),   # 7.16 x 3.3 in
    ((4.0, 3.0), (1200, 900)),
])
def test_paper_style_prints_at_column_widths(levels, tmp_path, size, pixels):
    path = plot_pass_rates(levels, reference_populations(), tmp_path / "fig.png",
                           style="paper", size=size)
    with Image.open(path) as image:
        assert image.size == pixels


def test_paper_style_has_no_title_and_numbers_levels_when_narrow(levels, tmp_path):
    text = plot_pass_rates(levels, reference_populations(), tmp_path / "fig.svg",
                           style="paper", size="single").read_text()
    assert "Proportion of trials passed per level" not in text
    assert "Food Retrieval" not in text  # no room: ticks are level numbers
    wide = plot_pass_rates(levels, reference_populations(), tmp_path / "wide.svg").read_text()
    assert "Proportion of trials passed per level" in wide and "Food Retrieval" in wide


def test_all_levels_panel_and_a_legend_naming_both_kinds_of_interval(levels, tmp_path):
    text = plot_pass_rates(levels, reference_populations(), tmp_path / "fig.svg").read_text()
    assert "All levels" in text and "10 levels" in text
    assert text.count("95% Wilson confidence interval (whiskers)") == 2  # alpha and beta
    # the legend wraps its entries: count the phrase's last words, which stay together
    assert text.count("over tasks (grey band)") == 2
    assert text.count("interquartile range (bar), pooled rate (point)") == 2


def test_pooled_panel_draws_each_model_at_its_overall_rate(levels, tmp_path, monkeypatch):
    import llm_aai.analysis.plots as plots

    drawn = []
    original = plots._draw_model

    def spy(ax, rows, label, x_of, offset, width, colour, **kwargs):
        drawn.append((label, list(rows["level"]), list(rows["k"]), list(rows["n"])))
        return original(ax, rows, label, x_of, offset, width, colour, **kwargs)

    monkeypatch.setattr(plots, "_draw_model", spy)
    plot_pass_rates(levels, reference_populations(), tmp_path / "fig.png")
    pooled = {label: (k[0], n[0]) for label, lv, k, n in drawn if lv == [0]}
    for label, group in levels.groupby("label"):
        assert pooled[label] == (group["k"].sum(), group["n"].sum())


def test_all_levels_panel_draws_each_models_interval_over_tasks(two_models, tmp_path,
                                                               monkeypatch):
    import llm_aai.analysis.plots as plots

    episodes = load_runs(two_models, with_turns=False).episodes
    overall = model_summary(episodes)
    drawn = {}
    original = plots._draw_model

    def spy(ax, rows, label, x_of, offset, width, colour, **kwargs):
        if list(rows["level"]) == [0]:
            drawn[label] = rows.iloc[0]
        return original(ax, rows, label, x_of, offset, width, colour, **kwargs)

    monkeypatch.setattr(plots, "_draw_model", spy)
    text = plot_pass_rates(pass_rates(episodes), reference_populations(), tmp_path / "fig.svg",
                           overall=overall).read_text()
    assert text.count('id="tasks-band-all"') == 2  # a grey band for alpha and for beta
    for row in overall.itertuples():
        pooled = drawn[row.label]
        assert (pooled["boot_low"], pooled["boot_high"]) == (row.boot_low, row.boot_high)
        assert pooled["boot_low"] < pooled["boot_high"]


def test_caption_line_names_each_run_and_its_settings(two_models, tmp_path):
    runs = load_runs(two_models, with_turns=False)
    caption = settings_caption(runs.runs)
    for run_id in runs.runs["run_id"]:
        assert run_id in caption
    assert "provider/alpha" in caption and "embedded" in caption and "Wilson 95%" in caption
    text = plot_pass_rates(pass_rates(runs.episodes), reference_populations(),
                           tmp_path / "fig.svg", caption=caption).read_text()
    assert "provider/alpha" in text


def test_sizes_are_parsed_or_refused():
    assert parse_size("single") == "single" and parse_size("7x3.5") == (7.0, 3.5)
    for bad in ("huge", "7", "0x3", "7x3x2"):
        with pytest.raises(ValueError, match="size must be 'single', 'double' or WIDTHxHEIGHT"):
            parse_size(bad)


def test_analyze_paper_figure_with_caption_and_size(two_models, tmp_path, capsys):
    path = tmp_path / "fig.svg"
    argv = [*map(str, two_models), "--plot", str(path), "--style", "paper", "--size", "single"]
    assert analyze(argv) == 0
    assert "Runs: " in path.read_text()
    assert analyze([*argv, "--no-caption"]) == 0
    assert "Runs: " not in path.read_text()
    assert analyze([*map(str, two_models), "--plot", str(path), "--size", "big"]) == 2
    assert "--size: size must be" in capsys.readouterr().err


def test_an_oracle_run_is_drawn_as_a_ceiling(tmp_path, make_run):
    model = make_run(tmp_path, model="m", levels=range(1, 3))
    oracle = make_run(tmp_path, model="oracle", levels=range(1, 3))
    levels = pass_rates(load_runs([model, oracle], with_turns=False).episodes)
    text = plot_pass_rates(levels, reference_populations(), tmp_path / "ceiling.svg").read_text()
    assert "oracle: ceiling (privileged search in the simulator)" in text
    assert "stroke-dasharray" in text  # the dashed ceiling line


def _titles_and_labels_outside(monkeypatch) -> list:
    """After each save: the axes' titles and labels that do not fit inside the figure."""
    from matplotlib.figure import Figure

    clipped, original = [], Figure.savefig

    def save(fig, *args, **kwargs):
        original(fig, *args, **kwargs)
        fig.canvas.draw()  # lay out again at the figure's own dpi, which fig.bbox is in
        renderer, box = fig.canvas.get_renderer(), fig.bbox
        texts = [text for ax in fig.axes for text in (
            ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label)]
        clipped.append([text.get_text() for text in texts if text.get_text() and (
            (extent := text.get_window_extent(renderer)).x0 < box.x0 - 0.5
            or extent.x1 > box.x1 + 0.5 or extent.y1 > box.y1 + 0.5)])

    monkeypatch.setattr(Figure, "savefig", save)
    return clipped


@pytest.mark.parametrize("style,size", [("paper", "single"), ("paper", "double"),
                                        ("paper", None), ("screen", None)])
def test_no_title_or_label_is_clipped(levels, tmp_path, monkeypatch, style, size):
    clipped = _titles_and_labels_outside(monkeypatch)
    plot_pass_rates(levels, reference_populations(), tmp_path / "fig.png", style=style,
                    size=size)
    assert clipped == [[]]


def _ceiling_lines(monkeypatch) -> list:
    """Each ceiling drawn: (axes index, y), recorded from _draw_ceiling's plot calls."""
    from matplotlib.axes import Axes

    drawn, original = [], Axes.plot

    def plot(ax, xs, ys, *args, **kwargs):
        if kwargs.get("linestyle") in ("--", ":", "-."):
            drawn.append((ax.get_subplotspec().colspan.start, ys[0]))
        return original(ax, xs, ys, *args, **kwargs)

    monkeypatch.setattr(Axes, "plot", plot)
    return drawn


def test_an_oracle_that_played_part_of_the_tasks_is_no_ceiling_over_all_levels(
        two_models, tmp_path, make_run, monkeypatch):
    # the models played the 40 tasks; the oracle one task of level 1 (passed)
    oracle = make_run(tmp_path, model="oracle-t", levels=range(1, 2), trials=range(1, 2),
                      passes=lambda task, level, trial: True)
    for folder in (oracle / "episodes").iterdir():
        if not folder.name.startswith("01-04-03"):
            shutil.rmtree(folder)
    levels = pass_rates(load_runs([*two_models, oracle], with_turns=False).episodes)
    drawn = _ceiling_lines(monkeypatch)
    text = plot_pass_rates(levels, reference_populations(), tmp_path / "fig.svg",
                           size=(30, 6)).read_text()
    assert drawn == [(0, 1.0)]  # level 1's line only; none across the all-levels panel
    assert ("oracle-t: ceiling (privileged search in the simulator); it played 1 of the 40 "
            "tasks shown (fewer on levels 1, 2, 3, 4, 5, 6, 7, 8, 9, 10): drawn only where it "
            "played, not in the all-levels panel") in text
    assert "oracle-t: 1 of 4 tasks" in text  # at level 1's line


def test_an_oracle_over_every_task_shown_is_drawn_over_all_levels(tmp_path, make_run,
                                                                  monkeypatch):
    model = make_run(tmp_path, model="m", levels=range(1, 3))
    oracle = make_run(tmp_path, model="oracle", levels=range(1, 3),
                      passes=lambda task, level, trial: level == 1)
    levels = pass_rates(load_runs([model, oracle], with_turns=False).episodes)
    drawn = _ceiling_lines(monkeypatch)
    text = plot_pass_rates(levels, reference_populations(), tmp_path / "fig.svg").read_text()
    assert drawn == [(0, 1.0), (0, 0.0), (1, 0.5)]
    assert "tasks shown" not in text
