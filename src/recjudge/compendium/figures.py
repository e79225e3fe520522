"""Figures legible at the book's column width, with a numbered caption and alt text.

At the top of a chapter::

    from recjudge.compendium import figures
    figures.use_book_style()        # SVG output, colour-blind-safe palette, 7 in wide, 10 pt base font

A figure cell draws with matplotlib as usual and glues the figure and its caption (:func:`glue_figure`, in a cell
removed from the page); the chapter's text places it with MyST-NB's ``glue:figure`` directive, which numbers it
("Fig. 3"), gives the image its ``alt`` text and makes it citable with ``{numref}`fig-...```.

:func:`check_figure` lists what makes a figure hard to read (more than :data:`MAX_SERIES` series in a panel,
text smaller than :data:`MIN_FONT_PT` as displayed at the column width, axes without labels or with snake_case
labels); :func:`series_panels` splits more series than a panel should hold into groups for facets.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported when a function needs it
    import pandas as pd
    from matplotlib.figure import Figure

#: The Okabe-Ito palette (Okabe & Ito 2008), distinguishable under the common colour-vision deficiencies.
OKABE_ITO = {
    "blue": "#0072B2", "vermillion": "#D55E00", "bluish green": "#009E73", "orange": "#E69F00",
    "reddish purple": "#CC79A7", "sky blue": "#56B4E9", "yellow": "#F0E442", "black": "#000000",
}
#: At most this many series (lines, bar groups, point clouds) share one panel.
MAX_SERIES = 6
#: The series colours, in order: the first six Okabe-Ito colours (yellow is too light on white for lines).
PALETTE: tuple[str, ...] = tuple(OKABE_ITO[name] for name in
                                 ("blue", "vermillion", "bluish green", "orange", "reddish purple", "sky blue"))
#: Marker shapes that go with the palette, so that series differ in more than colour.
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P")
#: The book's text column (the article's content box at a 1280 px wide window, measured in the built book), in CSS
#: pixels (96 per inch), and a figure width that fits it unscaled (7 in = 672 px).
COLUMN_WIDTH_PX = 676
FIGURE_WIDTH_IN = 7.0
#: Base font size (pt) and the smallest size any text may have as displayed at the column width.
BASE_FONT_PT = 10.0
MIN_FONT_PT = 9.0

#: rcParams of the book's style.
RC_PARAMS: dict[str, Any] = {
    "figure.figsize": (FIGURE_WIDTH_IN, 4.2),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": BASE_FONT_PT,
    "axes.titlesize": BASE_FONT_PT + 1,
    "axes.labelsize": BASE_FONT_PT,
    "xtick.labelsize": BASE_FONT_PT - 0.5,
    "ytick.labelsize": BASE_FONT_PT - 0.5,
    "legend.fontsize": BASE_FONT_PT - 0.5,
    "legend.title_fontsize": BASE_FONT_PT,
    "figure.titlesize": BASE_FONT_PT + 2,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "svg.fonttype": "path",       # glyphs as paths: the same figure in every browser, no font needed
    "svg.hashsalt": "recjudge",   # deterministic element ids: a rebuild writes the same SVG
}


def style_rc() -> dict[str, Any]:
    """The rcParams of the book's style, the colour cycle included (:data:`MARKERS` are there to pass by hand where
    series should differ in more than colour)."""
    from cycler import cycler

    return {**RC_PARAMS, "axes.prop_cycle": cycler(color=list(PALETTE))}


def use_book_style(*, svg: bool = True) -> None:
    """Apply the book's style to matplotlib and, in a notebook, make inline figures SVG (without a date stamp,
    so that a rebuild gives the same file)."""
    import matplotlib as mpl

    mpl.rcParams.update(style_rc())
    if svg:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython ships with the notebook tools
            return
        if get_ipython() is not None:
            from matplotlib_inline.backend_inline import set_matplotlib_formats

            set_matplotlib_formats("svg", metadata={"Date": None})


def colours(n: int) -> list[str]:
    """``n`` palette colours for ``n`` series of one panel; more than :data:`MAX_SERIES` is an error."""
    check_series_count(n)
    return list(PALETTE[:n])


#: Colours after :data:`PALETTE` for a figure whose panels together hold more series than one panel may: black, and
#: Tol's wine and olive (CVD-safe beside the Okabe-Ito colours), so that no colour names two series of one figure.
EXTRA_COLOURS: tuple[str, ...] = (OKABE_ITO["black"], "#882255", "#999933")


@dataclass(frozen=True)
class SeriesStyle:
    colour: str
    marker: str
    linestyle: str = "-"


#: Line styles that tell apart series sharing a colour, once there are more series than colours.
LINESTYLES: tuple[str, ...] = ("-", "--", ":", "-.")


def series_styles(labels: Sequence[Any]) -> dict[Any, SeriesStyle]:
    """One style per series across every panel of a figure (and every figure drawing the same ``labels``): a judge
    keeps its style whichever panel shows it. Give all the labels the figures may draw, in a fixed order. Up to the
    palette's 9 colours each series has a colour of its own; beyond them (a reader's judges added to the book's) a
    colour is reused with another line style and marker, so no two series share all three."""
    labels = list(dict.fromkeys(labels))
    palette = PALETTE + EXTRA_COLOURS
    if len(labels) > len(palette) * len(LINESTYLES):
        raise ValueError(f"{len(labels)} series: at most {len(palette) * len(LINESTYLES)} stay distinguishable; "
                         "show the rest in a table")
    styles = {}
    for i, label in enumerate(labels):
        colour_index, reuse = i % len(palette), i // len(palette)
        styles[label] = SeriesStyle(palette[colour_index], MARKERS[(colour_index + reuse) % len(MARKERS)],
                                    LINESTYLES[reuse])
    return styles


def check_series_count(n: int, *, where: str = "a panel") -> None:
    if n > MAX_SERIES:
        raise ValueError(f"{n} series in {where}: at most {MAX_SERIES} stay distinguishable; split them into "
                         f"panels (figures.series_panels / figures.facets) or show the rest in a table")


def series_panels(labels: Sequence[Any], max_per_panel: int = MAX_SERIES) -> list[list[Any]]:
    """Split series into as few panels as needed, as evenly as possible (13 series -> 5, 4, 4)."""
    labels = list(labels)
    if max_per_panel < 1 or max_per_panel > MAX_SERIES:
        raise ValueError(f"max_per_panel must be from 1 to {MAX_SERIES}")
    if not labels:
        return []
    panels = math.ceil(len(labels) / max_per_panel)
    size, extra = divmod(len(labels), panels)
    groups, start = [], 0
    for i in range(panels):
        stop = start + size + (1 if i < extra else 0)
        groups.append(labels[start:stop])
        start = stop
    return groups


def facets(labels: Sequence[Any], *, max_per_panel: int = MAX_SERIES, ncols: int = 2, panel_height: float = 3.0,
           sharey: bool = True):
    """A figure with one panel per group of at most ``max_per_panel`` series, at the column width.

    Returns ``(fig, [(ax, labels_of_that_panel), ...])``; each panel's series take the palette from its start."""
    import matplotlib.pyplot as plt

    groups = series_panels(labels, max_per_panel)
    ncols = max(1, min(ncols, len(groups)))
    nrows = math.ceil(len(groups) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(FIGURE_WIDTH_IN, panel_height * nrows), sharey=sharey,
                             squeeze=False, layout="constrained")
    flat = list(axes.ravel())
    for ax in flat[len(groups):]:
        ax.set_visible(False)
    return fig, list(zip(flat, groups))


# ---------------------------------------------------------------------------------------------------------------
# Checks


def displayed_scale(fig: Figure, column_px: int = COLUMN_WIDTH_PX) -> float:
    """How much the book shrinks the figure: an SVG is shown at its size (1 in = 96 px) unless wider than the
    column, then scaled down to fit."""
    width_px = fig.get_figwidth() * 96
    return min(1.0, column_px / width_px)


def check_figure(fig: Figure, *, max_series: int = MAX_SERIES, min_font_pt: float = MIN_FONT_PT) -> list[str]:
    """What makes ``fig`` hard to read at the column width, one sentence each (empty: nothing)."""
    import matplotlib.text as mtext

    problems = []
    scale = displayed_scale(fig)
    fig.canvas.draw()  # tick labels exist only once drawn
    small = sorted({round(t.get_fontsize() * scale, 1) for t in fig.findobj(mtext.Text)
                    if t.get_visible() and t.get_text().strip() and t.get_fontsize() * scale < min_font_pt})
    if small:
        problems.append(f"text of {small} pt as displayed at the column width (at least {min_font_pt} pt); "
                        f"the figure is {fig.get_figwidth():.1f} in wide, shown at {scale:.0%}")
    for i, ax in enumerate(a for a in fig.axes if a.get_visible()):
        name = f"panel {i + 1}" + (f" ({ax.get_title()!r})" if ax.get_title() else "")
        n = len(series_of(ax))
        if n > max_series:
            problems.append(f"{name} has {n} series (at most {max_series}): facet it with series_panels()")
        if ax.name == "rectilinear" and ax.axison:
            for axis, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
                if not label.strip() and _axis_has_ticks(ax, axis):
                    problems.append(f"{name}: the {axis} axis has no label")
                elif "_" in label and not label.strip().startswith("$"):
                    problems.append(f"{name}: the {axis} axis label {label!r} is a column name, not words")
        problems += [f"{name}: {problem}" for problem in _panel_problems(ax)]
    return problems


def _panel_problems(ax) -> list[str]:
    """What hides a panel's data or misreads its scale: no data and no word why, labels written over each other, a
    legend drawn over data points, log ticks written as powers of ten times a mantissa (6×10⁻¹)."""
    renderer = ax.figure.canvas.get_renderer()
    problems = []
    points = _data_points(ax)
    texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
    if not len(points) and not texts:
        problems.append("shows no data and says nothing about why (write the reason in the panel with ax.text)")
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    for i, (text, box) in enumerate(boxes):
        for other, other_box in boxes[i + 1:]:
            if box.overlaps(other_box):
                problems.append(f"the labels {text!r} and {other!r} overlap")
    legend = ax.get_legend()
    if legend is not None and legend.get_visible() and len(points):
        box = legend.get_window_extent(renderer)
        covered = int(((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1)
                       & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1)).sum())
        if covered:
            problems.append(f"the legend covers {covered} data point(s): place it outside the panel or where there "
                            "are none")
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "log":
            labels = [t.get_text() for t in axis.get_ticklabels(minor=True) + axis.get_ticklabels()]
            if any("times" in label for label in labels):
                problems.append(f"the log {axis.axis_name} axis writes ticks as a mantissa times a power of ten: "
                                "use plain numbers (matplotlib.ticker.ScalarFormatter or FixedLocator)")
    return problems


def _data_points(ax):
    """The display coordinates of a panel's data: the vertices of its lines (reference lines spanning the axes, such
    as ``axhline``, excluded) and the offsets of its scatter plots."""
    import numpy as np
    from matplotlib.collections import PathCollection
    from matplotlib.patches import Rectangle

    points = []
    for line in ax.get_lines():
        if not line.get_visible() or line.get_transform() is not ax.transData:
            continue  # axhline/axvline are drawn in blended axes coordinates: a reference, not data
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        points.append(ax.transData.transform(xy[np.isfinite(xy).all(axis=1)]))
    for collection in ax.collections:
        if isinstance(collection, PathCollection) and collection.get_visible() and len(collection.get_offsets()):
            points.append(collection.get_offset_transform().transform(np.asarray(collection.get_offsets(), float)))
    for patch in ax.patches:  # bars: the middle of the top edge, where the value is read
        if patch.get_visible() and isinstance(patch, Rectangle) and patch.get_transform().contains_branch(ax.transData):
            box = patch.get_window_extent()
            if box.width > 0 and box.height > 0:
                points.append(np.array([[(box.x0 + box.x1) / 2, box.y1]]))
    return np.vstack(points) if points else np.empty((0, 2))


def series_of(ax) -> list[str]:
    """The series of a panel: its labelled artists (what a legend would list), else its lines and scatter plots."""
    from matplotlib.collections import PathCollection

    _, labels = ax.get_legend_handles_labels()
    if labels:
        return list(dict.fromkeys(labels))
    lines = [f"line {i + 1}" for i, _ in enumerate(ax.get_lines())]
    scatters = [f"points {i + 1}" for i, c in enumerate(c for c in ax.collections if isinstance(c, PathCollection))]
    return lines + scatters


def _axis_has_ticks(ax, axis: str) -> bool:
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return any(t.get_text() for t in ticks)


#: What each panel of a figure with no data at all says: a run without scores (a plan, which asks nothing; a judge
#: whose every judgment failed; a chapter whose data are absent) still draws its figures, as labelled placeholders.
NO_SCORES = "No scores in this run"
#: What the caption of such a figure adds.
NO_SCORES_CAPTION = "(No scores in this run: a plan, a judge with no replies, or data absent; the panels are empty.)"


def shows_no_data(fig: Figure) -> bool:
    """True when no visible panel of ``fig`` holds data or text: a figure drawn from no scores at all (a figure
    with some panels drawn and others empty is not, and :func:`check_figure` still rejects it)."""
    panels = [ax for ax in fig.axes if ax.get_visible()]
    return bool(panels) and all(not len(_data_points(ax)) and not any(
        t.get_visible() and t.get_text().strip() for t in ax.texts) for ax in panels)


def label_no_scores(fig: Figure) -> Figure:
    """Write :data:`NO_SCORES` in the middle of every visible panel of ``fig`` (a figure :func:`shows_no_data`)."""
    for ax in fig.axes:
        if ax.get_visible():
            ax.text(0.5, 0.5, NO_SCORES, transform=ax.transAxes, ha="center", va="center", color="0.35")
    return fig


def assert_legible(fig: Figure, **kwargs) -> Figure:
    """Raise ``ValueError`` listing :func:`check_figure`'s problems; return ``fig`` when there are none. A figure
    with no data in any panel (:func:`shows_no_data`) passes as a labelled placeholder (:func:`label_no_scores`):
    a run without scores must not fail on its page."""
    if shows_no_data(fig):
        label_no_scores(fig)
    problems = check_figure(fig, **kwargs)
    if problems:
        raise ValueError("figure hard to read:\n- " + "\n- ".join(problems))
    return fig


# ---------------------------------------------------------------------------------------------------------------
# Numbered figures

_NAME = re.compile(r"^fig-[a-z0-9-]+$")

#: The suffix of the key under which :func:`glue_figure` glues a figure's caption.
CAPTION_SUFFIX = "-caption"


@dataclass(frozen=True)
class SvgImage:
    """An image as SVG text, displayed (and glued) as ``image/svg+xml`` only, so MyST-NB writes one file per figure
    and the build does not depend on the notebook's matplotlib formats."""

    svg: str

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return {"image/svg+xml": self.svg}


def svg_image(fig: Figure, *, close: bool = True) -> SvgImage:
    """``fig`` as SVG without a date, so that a rebuild writes the same file; with ``close``, close ``fig`` so that
    the notebook does not show it a second time."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return SvgImage(buffer.getvalue())


def glue_figure(name: str, fig: Figure, caption: str | None = None, *, check: bool = True) -> None:
    """Glue ``fig`` under ``name`` and its caption (MyST markdown, which may hold computed numbers) under
    ``name + CAPTION_SUFFIX``, for a numbered figure written in the chapter's text::

        ```{glue:figure} fig-scores
        :name: fig-scores
        :alt: One or two sentences on what the figure shows, for readers who cannot see it.

        {glue:md}`fig-scores-caption`
        ```

    ``name`` is also the label ``{numref}`` cites (``fig-`` then lower-case letters, digits and ``-``). A caption
    without computed parts can be written in the directive instead (``caption=None``). With ``check``, raise when
    :func:`check_figure` finds problems. Returns nothing, so that a cell ending with it shows nothing: the
    figure appears where the text places it."""
    from IPython.display import Markdown
    from myst_nb import glue

    if not _NAME.match(name):
        raise ValueError(f"figure name {name!r}: 'fig-' then lower-case letters, digits and '-' (e.g. 'fig-limits')")
    if caption is not None and not caption.strip():
        raise ValueError(f"figure {name!r}: an empty caption; write it in the glue:figure directive or pass one")
    empty = shows_no_data(fig)
    if check:
        assert_legible(fig)
    image = svg_image(fig)
    glue(name, image, display=False)
    if caption is not None:
        caption = f"{caption} {NO_SCORES_CAPTION}" if empty else caption
        glue(name + CAPTION_SUFFIX, Markdown(" ".join(caption.split())), display=False)


def glue_not_drawn(name: str, reason: str) -> None:
    """Glue, under a figure's ``name``, the reason it is not drawn in this build (its data are absent, say), so the
    chapter's ``glue:figure`` still resolves and later figures keep their numbers."""
    from IPython.display import Markdown
    from myst_nb import glue

    glue(name, Markdown(f"*{reason.strip().rstrip('.')}.*"), display=False)
    glue(name + CAPTION_SUFFIX, Markdown("Not drawn in this build."), display=False)


# ---------------------------------------------------------------------------------------------------------------
# Shared plots

def plot_size_table(size_table: pd.DataFrame, metrics: Sequence[str], labels: Mapping[str, str] | None = None):
    """Mean, best and worst value per ensemble size, one panel per metric (Kang et al. Figures 5-6 shape).
    ``size_table``: rows of ``ensemble_size_table`` (one ``by`` group)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(metrics), figsize=(FIGURE_WIDTH_IN, 3.4), squeeze=False)
    series_colours = colours(3)
    for ax, metric in zip(axes.flat, metrics):
        part = size_table[size_table["metric"] == metric].sort_values("n")
        for (column, name), colour, marker in zip((("mean", "mean"), ("best", "best"), ("worst", "worst")),
                                                  series_colours, MARKERS):
            ax.plot(part["n"], part[column], marker=marker, color=colour, label=name)
        label = (labels or {}).get(metric, metric)
        ax.set(xlabel="Ensemble size", ylabel=label, title=label, xticks=sorted(part["n"].unique()))
    axes.flat[0].legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncols=3)
    fig.tight_layout()
    return fig


__all__ = ["OKABE_ITO", "PALETTE", "MARKERS", "MAX_SERIES", "COLUMN_WIDTH_PX", "FIGURE_WIDTH_IN", "BASE_FONT_PT",
           "MIN_FONT_PT", "RC_PARAMS", "style_rc", "use_book_style", "colours", "EXTRA_COLOURS", "SeriesStyle",
           "series_styles", "LINESTYLES", "check_series_count",
           "series_panels", "facets", "displayed_scale", "check_figure", "series_of", "assert_legible",
           "NO_SCORES", "NO_SCORES_CAPTION", "shows_no_data", "label_no_scores",
           "CAPTION_SUFFIX", "SvgImage", "svg_image", "glue_figure", "glue_not_drawn", "plot_size_table"]
