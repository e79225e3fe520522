"""The book's figure style: a colour-blind-safe palette, few series per panel, legible text, caption and alt text."""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
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


def test_figure_metadata_is_what_myst_nb_reads():
    meta = figures.figure_metadata("Potential surprise by time frame.",
                                   "Six lines, one per item model; the normalised surprise falls with each frame.",
                                   name="fig-surprise-by-frame")
    assert meta == {"mystnb": {"figure": {"caption": "Potential surprise by time frame.",
                                          "name": "fig-surprise-by-frame"},
                               "image": {"alt": "Six lines, one per item model; the normalised surprise falls with "
                                                "each frame."}}}
    with pytest.raises(ValueError, match="alt"):
        figures.figure_metadata("A caption.", " ")
    with pytest.raises(ValueError, match="caption"):
        figures.figure_metadata("", "alt text")
    with pytest.raises(ValueError, match="name"):
        figures.figure_metadata("A caption.", "Alt text.", name="Fig 1")


def test_the_cell_metadata_keys_exist_in_the_installed_myst_nb():
    from myst_nb.core.config import NbParserConfig

    fields = NbParserConfig.__dataclass_fields__
    assert NbParserConfig().cell_metadata_key == "mystnb"
    assert fields["render_figure_options"].metadata["cell_key"] == "figure"
    assert fields["render_image_options"].metadata["cell_key"] == "image"


def test_captioned_figure_emits_figure_img_alt_and_figcaption():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [1, 4, 9], label="ours")
    ax.set_xlabel("Rank")
    ax.set_ylabel("Score")
    shown = figures.captioned(fig, "Scores by rank (Pearson r = 0.98).", 'A line rising from 1 to 9, "ours".',
                              name="fig-scores")
    page = shown._repr_html_()
    assert re.search(r'<figure class="recjudge-figure" id="fig-scores"[^>]*><img src="data:image/svg\+xml;base64,',
                     page)
    assert 'alt="A line rising from 1 to 9, &quot;ours&quot;."' in page
    assert "<figcaption" in page and "Scores by rank (Pearson r = 0.98).</figcaption></figure>" in page
    assert shown.image.startswith(b"<?xml") and b"<dc:date>" not in shown.image
    assert not plt.fignum_exists(fig.number)  # closed: the notebook shows it once

    crowded, ax = plt.subplots()
    for i in range(8):
        ax.plot([0, 1], [0, i], label=str(i))
    with pytest.raises(ValueError, match="8 series"):
        figures.captioned(crowded, "Caption.", "Alt text.")
