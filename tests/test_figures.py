"""The book's figure style: a colour-blind-safe palette, few series per panel, legible text, caption and alt text."""


import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from recjudge.compendium import figures  # noqa: E402


@pytest.fixture(autouse=True)
def _book_style():
    with matplotlib.rc_context():
        figures.use_book_style(svg=False)
        yield
    plt.close("all")


def test_palette_is_okabe_ito_and_covers_the_series_limit():
    assert len(figures.OKABE_ITO) == 8
    assert len(figures.PALETTE) == figures.MAX_SERIES == 6
    assert len(set(figures.PALETTE)) == len(figures.PALETTE)
    assert set(figures.PALETTE) <= set(figures.OKABE_ITO.values())
    assert figures.OKABE_ITO["yellow"] not in figures.PALETTE  # too light for lines on white
    assert len(figures.MARKERS) >= figures.MAX_SERIES
    cycle = [c for c in matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]]
    assert [to_rgb(c) for c in cycle] == [to_rgb(c) for c in figures.PALETTE]


def test_style_is_legible_at_column_width():
    rc = matplotlib.rcParams
    assert rc["font.size"] >= 10
    assert min(rc[k] for k in ("xtick.labelsize", "ytick.labelsize", "legend.fontsize", "axes.labelsize")) >= 9
    width = rc["figure.figsize"][0]
    assert 6 <= width <= 7.5 and width * 96 <= figures.COLUMN_WIDTH_PX  # shown at full size, not shrunk
    assert rc["svg.hashsalt"]  # deterministic SVG ids


def test_at_most_six_series_per_panel():
    assert figures.colours(6) == list(figures.PALETTE)
    with pytest.raises(ValueError, match="7 series"):
        figures.colours(7)
    assert figures.series_panels(list("abcdef")) == [list("abcdef")]
    groups = figures.series_panels([f"s{i}" for i in range(13)])
    assert [len(g) for g in groups] == [5, 4, 4]
    assert sum(groups, []) == [f"s{i}" for i in range(13)]
    with pytest.raises(ValueError):
        figures.series_panels(["a"], max_per_panel=7)


def test_facets_give_one_panel_per_group_at_column_width():
    fig, panels = figures.facets([f"s{i}" for i in range(8)])
    assert [len(labels) for _, labels in panels] == [4, 4]
    assert fig.get_figwidth() == figures.FIGURE_WIDTH_IN
    for ax, labels in panels:
        for label in labels:
            ax.plot([0, 1], [0, 1], label=label)
        ax.set_xlabel("Rank")
        ax.set_ylabel("Score")
    assert figures.check_figure(fig) == []


def test_check_figure_flags_crowded_small_and_unlabelled_figures():
    fig, ax = plt.subplots()
    for i in range(7):
        ax.plot([0, 1], [i, i + 1], label=f"method {i}")
    ax.set_xlabel("n_items")
    problems = figures.check_figure(fig)
    assert any("7 series" in p for p in problems)
    assert any("'n_items' is a column name" in p for p in problems)
    assert any("y axis has no label" in p for p in problems)
    with pytest.raises(ValueError, match="hard to read"):
        figures.assert_legible(fig)

    wide, ax = plt.subplots(figsize=(14, 4))  # shown at half size: 10 pt text becomes 5 pt
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("Rank")
    ax.set_ylabel("Score")
    assert figures.displayed_scale(wide) < 0.6
    assert any("pt as displayed" in p for p in figures.check_figure(wide))


def test_glue_figure_glues_an_svg_and_its_caption_for_a_numbered_figure(monkeypatch):
    import myst_nb

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: glued.update({name: (value, display)}))
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [1, 4, 9], label="ours")
    ax.set_xlabel("Rank")
    ax.set_ylabel("Score")
    figures.glue_figure("fig-scores", fig, "Scores by rank\n (Pearson r = 0.98).")
    image, shown = glued["fig-scores"]
    assert not shown and set(image._repr_mimebundle_()) == {"image/svg+xml"}
    assert image.svg.startswith("<?xml") and "<dc:date>" not in image.svg
    caption, _ = glued["fig-scores" + figures.CAPTION_SUFFIX]
    assert caption._repr_markdown_() == "Scores by rank (Pearson r = 0.98)."
    assert not plt.fignum_exists(fig.number)  # closed: the notebook shows it once, where the text places it

    again, ax = plt.subplots()
    ax.plot([1, 2, 3], [1, 4, 9], label="ours")
    ax.set_xlabel("Rank")
    ax.set_ylabel("Score")
    assert figures.glue_figure("fig-scores", again) is None  # a cell ending with it shows nothing
    assert glued["fig-scores"][0].svg == image.svg  # the same figure, the same file
    with pytest.raises(ValueError, match="'fig-'"):
        figures.glue_figure("Fig 1", again)
    with pytest.raises(ValueError, match="empty caption"):
        figures.glue_figure("fig-scores", again, " ")

    crowded, ax = plt.subplots()
    for i in range(8):
        ax.plot([0, 1], [0, i], label=str(i))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    with pytest.raises(ValueError, match="series"):
        figures.glue_figure("fig-crowded", crowded, "Too many lines.")


def test_a_figure_not_drawn_still_resolves_with_its_reason(monkeypatch):
    import myst_nb

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: glued.update({name: value}))
    figures.glue_not_drawn("fig-genres", "`movielens-latest-2018-movies` is not in this build.")
    assert glued["fig-genres"]._repr_markdown_() == "*`movielens-latest-2018-movies` is not in this build.*"
    assert "Not drawn" in glued["fig-genres" + figures.CAPTION_SUFFIX]._repr_markdown_()



def _labelled(ax):
    ax.set_xlabel("Rank")
    ax.set_ylabel("Score")
    return ax


def test_a_panel_without_data_must_say_why():
    fig, (drawn, empty) = plt.subplots(1, 2)
    drawn.plot([1, 2], [1, 2])
    empty.axhline(3, linestyle=":")  # a reference line is not data
    for ax in (drawn, _labelled(empty)):
        _labelled(ax)
    assert any("panel 2" in p and "no data" in p for p in figures.check_figure(fig))
    empty.text(0.5, 0.5, "no parsable reply (n = 0)", transform=empty.transAxes, ha="center")
    assert figures.check_figure(fig) == []


def test_labels_written_over_each_other_are_flagged():
    fig, ax = plt.subplots()
    _labelled(ax).scatter([0.0, 5.0, 5.05, 10.0], [1.80, 1.90, 1.901, 2.0])  # two points close on a wide axis
    ax.annotate("KFN + popularity", (5.0, 1.90))
    ax.annotate("Popularity", (5.05, 1.901))
    assert any("'KFN + popularity' and 'Popularity' overlap" in p for p in figures.check_figure(fig))


def test_a_legend_over_data_points_is_flagged_and_one_beside_them_is_not():
    fig, ax = plt.subplots()
    x = [i / 10 for i in range(11)]
    _labelled(ax).plot(x, [0.5] * 11, label="flat")
    ax.legend(loc="center")
    assert any("legend covers" in p for p in figures.check_figure(fig))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2))
    assert figures.check_figure(fig) == []


def test_log_ticks_written_as_powers_of_ten_are_flagged():
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    fig, ax = plt.subplots()
    _labelled(ax).plot([25, 1000], [0.7, 0.08])
    ax.set_xscale("log")
    ax.set_yscale("log")
    assert any("mantissa times a power of ten" in p for p in figures.check_figure(fig))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    assert figures.check_figure(fig) == []


def test_bars_are_data_and_a_legend_over_a_bar_is_flagged():
    fig, ax = plt.subplots()
    _labelled(ax).bar([0, 1, 2], [5, 5, 5], label="users")
    assert figures.check_figure(fig) == []
    ax.legend(loc="upper center")  # over the middle bar's top
    assert any("legend covers" in p for p in figures.check_figure(fig))


def test_the_size_table_plot_keeps_its_legend_off_the_data():
    import pandas as pd

    table = pd.DataFrame({"metric": ["pearson"] * 3, "n": [1, 2, 3], "mean": [0.1, 0.2, 0.25],
                          "best": [0.3, 0.3, 0.25], "worst": [-0.1, 0.1, 0.25]})
    assert figures.check_figure(figures.plot_size_table(table, ["pearson"], {"pearson": "Pearson"})) == []


def test_a_figure_with_no_scores_in_any_panel_passes_as_a_labelled_placeholder_but_a_half_empty_one_does_not():
    import pandas as pd

    from recjudge.serendipity import auxiliary_data as aux

    columns = ["pearson_pct", "pearson_ci_low", "pearson_ci_high", "mae", "mae_ci_low", "mae_ci_high", "rmse",
               "rmse_ci_low", "rmse_ci_high"]
    settings = ["NA", "Pop + Sim"]
    no_scores = pd.DataFrame({"method": settings, **{column: [np.nan, np.nan] for column in columns}})
    fig = aux.plot_agreement_by_setting(no_scores, settings)  # what a plan, which asks nothing, draws
    assert figures.shows_no_data(fig)
    assert any("shows no data" in problem for problem in figures.check_figure(fig))
    assert figures.assert_legible(fig) is fig
    assert [t.get_text() for ax in fig.axes for t in ax.texts] == [figures.NO_SCORES] * 3
    half = no_scores.assign(mae=[0.9, 1.1], mae_ci_low=[0.8, 1.0], mae_ci_high=[1.0, 1.2])
    broken = aux.plot_agreement_by_setting(half, settings)
    assert not figures.shows_no_data(broken)
    with pytest.raises(ValueError, match="panel 1 .*shows no data"):
        figures.assert_legible(broken)


def test_a_glued_figure_with_no_scores_says_so_in_its_caption(monkeypatch):
    import myst_nb

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=False: glued.__setitem__(name, value))
    fig, ax = plt.subplots()
    _labelled(ax)
    ax.plot([np.nan], [np.nan])
    figures.glue_figure("fig-empty", fig, "Scores by rank.")
    assert glued["fig-empty-caption"].data == f"Scores by rank. {figures.NO_SCORES_CAPTION}"
    assert "<svg" in glued["fig-empty"].svg
