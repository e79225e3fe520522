"""Algorithm 1 of Lima & Peres (2018): one plus random, adapted to estimate normalised surprise.

For each user ``u`` of an eligible interval (see :mod:`recjudge.surprise.time_frames`)::

    E_u <- items u rated in the interval;  N_u <- I \\ E_u          (lines 3-4)
    L1  <- random(N_u, 1000)                                        (line 6)
    seq' <- the topN = 10 items of L1 by the recommender's score    (lines 7-9)
    acc += S^_sn(seq', E_u)                                         (line 10, eq. 21)

and the interval's value is ``acc / |U|`` (line 12); the time series of these values is summarised by its median,
mean and standard deviation (Table 2).

The limits in eq. 21 are the greedy estimates of eqs. 17-20 truncated to ``topN`` items (section 3.6) and taken
over the **whole** ``N_u``, without sampling: the paper gives this as the first reason why MSI and LSI miss 1 and 0
(*"Algorithm 1 draws 1,000 items from the set of unknown items (N_u), while S^_pmax and S^_pmin selects topN items
from N_u without sampling"*). The greedy estimate is what the paper uses at this scale (exact limits over
thousands of unknown items are out of reach); :mod:`recjudge.surprise.limits` holds the exact dynamic programme for
small instances. As in Experiment 2, ``S^_sn`` is clipped to [0, 1] and how often that happened is reported.

The supplementary run (``sampling=False, greedy_selection=True``): *"Algorithm 1 was altered so that it could use
the N_u without sampling and with a greedy search"* — the candidates are all of ``N_u`` and MSI (LSI) builds its
list greedily, each pick maximising (minimising) surprise given the items picked before, which makes it coincide
with the greedy limit, so MSI scores 1 and LSI 0. item-kNN keeps ranking by score.

Computation: the surprise measures, limits and clipping are those of :mod:`recjudge.surprise.limits`; every distance
they need is a column of the item x item distance matrix of the model, computed on demand and kept
(:class:`DistanceColumns`), so the intervals and users of a run share the work. Each recommender sees the same
random sample of a user's unknown items (a paired comparison); the sample is drawn from a generator seeded by
(seed, interval, user), so results do not depend on the order or parallelism of the run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from recjudge.surprise.item_models import DISTANCE_LABELS, ItemModel, PairwiseDistance
from recjudge.surprise.limits import PotentialSurprise, SurpriseProblem, normalised_surprise, potential_surprise_greedy
from recjudge.surprise.recommenders import PAPER_K_NEIGHBOURS, RECOMMENDERS, scorer, top_n
from recjudge.surprise.time_frames import Interval, repository_items

PAPER_N_SAMPLED = 1000
#: Rough cost of a cell (model, distance) or a distance relative to cosine in a one-plus-random pass, from the
#: single-process timings of ml-latest-small (orders parallel work only).
_RELATIVE_COST = {("C", "jensen_shannon"): 5.0, ("U", "jensen_shannon"): 4.2, "npmi": 2.0, ("U", "jaccard"): 1.6,
                  ("C", "jaccard"): 1.4, "aitchison": 1.4, "euclidean": 1.2, ("P", "cosine"): 0.9}
PAPER_TOP_N = 10


@dataclass(frozen=True)
class OnePlusRandomSettings:
    """Parameters of Algorithm 1 (paper values by default)."""

    n_sampled: int = PAPER_N_SAMPLED
    top_n: int = PAPER_TOP_N
    k_neighbours: int = PAPER_K_NEIGHBOURS
    seed: int = 0
    #: False: candidates are the whole N_u (supplementary run).
    sampling: bool = True
    #: True: MSI and LSI build their list by greedy search (supplementary run).
    greedy_selection: bool = False
    recommenders: tuple[str, ...] = RECOMMENDERS
    #: Name of the run in result tables (column ``run``).
    label: str = "one_plus_random"


def supplementary_settings(settings: OnePlusRandomSettings) -> OnePlusRandomSettings:
    """``settings`` changed into the paper's supplementary run (no sampling, greedy selection)."""
    from dataclasses import replace

    return replace(settings, sampling=False, greedy_selection=True, label="no_sampling_greedy")


class DistanceColumns:
    """Lazily computed columns of the model's item x item distance matrix (float32), computed in chunks.

    Rows can be restricted (``rows``: model positions of every item that may be a candidate), which saves time
    and memory when the repository is restricted; columns (known items and picks) can be any item."""

    def __init__(self, pairwise: PairwiseDistance, rows: np.ndarray | None = None, chunk: int = 512) -> None:
        self.pairwise = pairwise
        self.n_items = pairwise.model.n_items
        self.rows = np.arange(self.n_items) if rows is None else np.unique(np.asarray(rows, dtype=np.int64))
        self._row_lookup = np.full(self.n_items, -1, dtype=np.int64)
        self._row_lookup[self.rows] = np.arange(len(self.rows))
        self.chunk = chunk
        # one contiguous row per *column* item, so a column (all candidates' distances to one item) is one read
        self._columns = np.zeros((self.n_items, len(self.rows)), dtype=np.float32)
        self._done = np.zeros(self.n_items, dtype=bool)
        self.n_computed = 0

    def ensure(self, positions: np.ndarray) -> None:
        positions = np.asarray(positions, dtype=np.int64)
        if self._done[positions].all():
            return
        missing = np.unique(positions[~self._done[positions]])
        for start in range(0, len(missing), self.chunk):
            part = missing[start : start + self.chunk]
            self._store(part, self.pairwise.block(self.rows, part))
            self._done[part] = True
        self.n_computed += len(missing)

    def _store(self, part: np.ndarray, block: np.ndarray, width: int = 256) -> None:
        # float32 first (the same rounding as a cast on assignment), then the transpose a band of rows at a time,
        # which keeps reads and writes in cache
        if block.flags.f_contiguous:  # one contiguous row per column already (e.g. Jensen-Shannon)
            self._columns[part] = block.T
            return
        block = block.astype(np.float32)
        if len(part) == 1:
            self._columns[part[0]] = block[:, 0]
            return
        stored = np.empty((len(part), block.shape[0]), dtype=np.float32)
        for start in range(0, block.shape[0], width):
            stored[:, start : start + width] = block[start : start + width].T
        self._columns[part] = stored

    def row_index(self, rows: np.ndarray) -> np.ndarray:
        """Positions of items (model positions) among this matrix's rows."""
        row_index = self._row_lookup[np.asarray(rows, dtype=np.int64)]
        if (row_index < 0).any():
            raise ValueError("distance requested from an item outside the rows this matrix was built for")
        return row_index

    def block(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Distances (float64) from items at ``rows`` (model positions) to items at ``columns``."""
        columns = np.asarray(columns, dtype=np.int64)
        row_index = self.row_index(rows)
        self.ensure(columns)
        # one stored row at a time reads only the requested entries (not whole stored rows first), and faster than
        # one fancy index over both axes
        picked = np.empty((len(columns), len(row_index)), dtype=np.float32)
        for i, column in enumerate(columns.tolist()):
            self._columns[column].take(row_index, out=picked[i])
        return picked.T.astype(np.float64)

    def column(self, row_index: np.ndarray, column: int) -> np.ndarray:
        """Distances (float64) from the rows at ``row_index`` (see :meth:`row_index`) to one item."""
        self.ensure(np.array([column]))
        return self._columns[column][row_index].astype(np.float64)

    def nearest(self, row_index: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """For each row at ``row_index``, the smallest distance to any item at ``columns`` (float64): the same
        values as ``block(rows, columns).min(axis=1)``, with the minimum taken before the rows are selected."""
        columns = np.asarray(columns, dtype=np.int64)
        self.ensure(columns)
        # a running minimum over the stored rows avoids copying a (known items x all items) block first
        nearest = self._columns[columns[0]].copy()
        for column in columns[1:]:
            np.minimum(nearest, self._columns[column], out=nearest)
        return nearest[row_index].astype(np.float64)


def user_problem(columns: DistanceColumns, known: np.ndarray, unknown: np.ndarray) -> SurpriseProblem:
    """The user's :class:`recjudge.surprise.SurpriseProblem`: ``S_i(i, E_u)`` for every unknown item and lazily
    computed distances between unknown items (one cached column per item the greedy search or a list touches)."""
    unknown_rows = columns.row_index(unknown)
    initial = columns.nearest(unknown_rows, known)
    rows: dict[int, np.ndarray] = {}  # the limits and the lists read the same rows: keep them

    def row(position: int) -> np.ndarray:
        if position not in rows:
            rows[position] = columns.column(unknown_rows, int(unknown[position]))
        return rows[position]

    return SurpriseProblem(initial=initial, row=row)


def evaluate_user(
    columns: DistanceColumns,
    known: np.ndarray,
    known_ratings: np.ndarray,
    unknown: np.ndarray,
    settings: OnePlusRandomSettings,
    rng: np.random.Generator,
) -> list[dict]:
    """Algorithm 1, lines 3-10, for one user: one row per recommender with the list's surprise (eq. 13), the
    greedy limits truncated to ``top_n`` over the whole ``N_u`` (eqs. 17-20, section 3.6) and the normalised
    surprise (eq. 21) before (``normalised_raw``) and after clipping (``normalised``), all from
    :func:`recjudge.surprise.normalised_surprise`."""
    problem = user_problem(columns, known, unknown)
    k = min(settings.top_n, len(unknown))
    if settings.sampling and len(unknown) > settings.n_sampled:
        sample = rng.choice(len(unknown), size=settings.n_sampled, replace=False)
    else:
        sample = rng.permutation(len(unknown))
    block = None
    greedy: dict[str, PotentialSurprise] = {}  # the limits (and greedy lists) are the same for every recommender

    def greedy_limit(kind: str) -> PotentialSurprise:
        if kind not in greedy:
            greedy[kind] = potential_surprise_greedy(problem, kind, k)
        return greedy[kind]

    rows = []
    for name in settings.recommenders:
        if settings.greedy_selection and name in ("MSI", "LSI"):
            if settings.sampling:
                raise ValueError("greedy selection is defined on the whole N_u: set sampling=False")
            chosen = np.asarray(greedy_limit("max" if name == "MSI" else "min").order)
        else:
            if name == "kNN":
                if block is None:
                    block = columns.block(unknown[sample], known)
                scores = scorer(name, settings.k_neighbours)(block, known_ratings)
            else:
                scores = scorer(name)(problem.initial[sample][:, None], known_ratings)
            chosen = sample[top_n(scores, k)]
        limits = (greedy_limit("min"), greedy_limit("max")) if len(chosen) == k else None
        result = normalised_surprise(problem, chosen, "greedy", limits=limits)
        rows.append(
            {
                "recommender": name,
                "surprise": result.surprise,
                "max_surprise": result.s_max,
                "min_surprise": result.s_min,
                "normalised_raw": result.raw,
                "normalised": result.value,
                "clipped": bool(result.clipped),
            }
        )
    return rows


def user_plans(
    model: ItemModel,
    intervals: list[Interval],
    release_dates: pd.Series,
    *,
    max_users_per_interval: int | None = None,
    allowed_items: np.ndarray | None = None,
) -> list[tuple]:
    """Per interval and user, in run order, what Algorithm 1 needs from the data under ``model``:
    ``(interval, user_id, known positions, known ratings, unknown positions)``. It does not depend on the distance,
    so the cells of one model share it (see :func:`run_one_plus_random` for the parameters and the users left out)."""
    allowed = None if allowed_items is None else set(np.asarray(allowed_items).tolist())
    plans = []
    for interval in intervals:
        repository = repository_items(release_dates, interval.end)
        if allowed is not None:
            repository = np.array([item for item in repository.tolist() if item in allowed])
        repository_positions = model.positions(repository)
        repository_positions = repository_positions[repository_positions >= 0]
        users = interval.sample_users[:max_users_per_interval] if max_users_per_interval else interval.sample_users
        for user_id in users:
            known_frame = interval.known_items(user_id)
            known_positions = model.positions(known_frame["item_id"].to_numpy())
            keep = known_positions >= 0
            known_positions = known_positions[keep]
            if len(known_positions) == 0:
                continue
            known_ratings = known_frame["rating"].to_numpy(dtype=np.float64)[keep]
            unknown = np.setdiff1d(repository_positions, known_positions)
            if len(unknown) == 0:
                continue
            plans.append((interval.last_frame, user_id, known_positions, known_ratings, unknown))
    return plans


def run_one_plus_random(
    model: ItemModel,
    distance: str,
    intervals: list[Interval],
    release_dates: pd.Series,
    settings: OnePlusRandomSettings | Sequence[OnePlusRandomSettings] = OnePlusRandomSettings(),
    *,
    max_users_per_interval: int | None = None,
    allowed_items: np.ndarray | None = None,
) -> pd.DataFrame:
    """Algorithm 1 over every interval (and its user sample) for one model and distance.

    ``allowed_items`` restricts the repository (e.g. to the most-rated items for a quick run);
    ``max_users_per_interval`` keeps the first users of each sample (sorted by id). Known items the model does
    not describe (e.g. an item without text) are left out of ``E_u``, as the paper rejected such items.
    Returns one row per interval x user x recommender (columns documented in :func:`evaluate_user`, plus
    ``run``, ``model``, ``distance``, ``interval``, ``user_id``, ``n_known``, ``n_unknown``, ``n_candidates``).
    Several settings (e.g. the sampled run and :func:`supplementary_settings`) share one pass and its distances."""
    plans = user_plans(model, intervals, release_dates, max_users_per_interval=max_users_per_interval,
                       allowed_items=allowed_items)
    return _run_plans(model, distance, plans, settings, allowed_items)


def _run_plans(model: ItemModel, distance: str, plans: list[tuple],
               settings: OnePlusRandomSettings | Sequence[OnePlusRandomSettings],
               allowed_items: np.ndarray | None) -> pd.DataFrame:
    """:func:`run_one_plus_random` on the :func:`user_plans` of ``model`` (shared by the cells of one model)."""
    runs = [settings] if isinstance(settings, OnePlusRandomSettings) else list(settings)
    candidate_rows = None
    if allowed_items is not None:
        candidate_rows = model.positions(np.array(sorted(set(np.asarray(allowed_items).tolist()))))
        candidate_rows = candidate_rows[candidate_rows >= 0]
    columns = DistanceColumns(model.distance(distance), rows=candidate_rows)
    rows = []
    for interval, user_id, known_positions, known_ratings, unknown in plans:
        for run in runs:
            rng = np.random.default_rng([run.seed, interval, int(user_id)])
            for row in evaluate_user(columns, known_positions, known_ratings, unknown, run, rng):
                row.update(
                    run=run.label,
                    model=model.name,
                    distance=distance,
                    interval=interval,
                    user_id=user_id,
                    n_known=len(known_positions),
                    n_unknown=len(unknown),
                    n_candidates=min(len(unknown), run.n_sampled) if run.sampling else len(unknown),
                )
                rows.append(row)
    order = ["run", "model", "distance", "interval", "user_id", "recommender", "n_known", "n_unknown", "n_candidates"]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=order + ["surprise", "max_surprise", "min_surprise", "normalised_raw",
                                             "normalised", "clipped"])
    return frame[order + [c for c in frame.columns if c not in order]]


def _grid_cell(model: ItemModel, distance: str, plans: list[tuple], settings, allowed_items) -> tuple:
    started = time.perf_counter()
    result = _run_plans(model, distance, plans, settings, allowed_items)
    return result, {"model": model.name, "distance": distance, "seconds": time.perf_counter() - started}


def run_grid(
    models: dict[str, ItemModel],
    intervals: list[Interval],
    release_dates: pd.Series,
    settings: OnePlusRandomSettings | Sequence[OnePlusRandomSettings] = OnePlusRandomSettings(),
    *,
    pairs: list[tuple[str, str]] | None = None,
    max_users_per_interval: int | None = None,
    allowed_items: np.ndarray | None = None,
    n_jobs: int = 1,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`run_one_plus_random` for every (model, distance) pair (default: every valid pair of the given
    models). Returns the per-user results and a timing table (seconds per pair).
    The users' known and unknown items are read once per model (:func:`user_plans`). ``n_jobs > 1`` runs pairs
    in parallel with joblib (each pair holds its own distance matrix in memory), the costliest first, each
    worker sent only its pair's model and plans."""
    from joblib import Parallel, delayed

    from recjudge.surprise.item_models import VALID_DISTANCES

    if pairs is None:
        pairs = [(m, d) for m in models for d in VALID_DISTANCES[m]]
    plans: dict[str, list[tuple]] = {}

    def plans_of(name: str) -> list[tuple]:
        # read when a model's first cell is sent, so that the workers start on the first cells meanwhile
        if name not in plans:
            plans[name] = user_plans(models[name], intervals, release_dates,
                                     max_users_per_interval=max_users_per_interval, allowed_items=allowed_items)
        return plans[name]

    if n_jobs == 1:
        outputs = [_grid_cell(models[m], d, plans_of(m), settings, allowed_items) for m, d in pairs]
    else:
        # the slowest cells first (longest-processing-time order), so that no core is left with one long cell at
        # the end; results keep the order of ``pairs``
        order = sorted(range(len(pairs)), key=lambda i: -_relative_cost(*pairs[i]))
        done = Parallel(n_jobs=n_jobs, batch_size=1)(
            delayed(_grid_cell)(models[pairs[i][0]], pairs[i][1], plans_of(pairs[i][0]), settings, allowed_items)
            for i in order
        )
        outputs = [output for _, output in sorted(zip(order, done), key=lambda pair: pair[0])]
    results = pd.concat([out[0] for out in outputs], ignore_index=True)
    timings = pd.DataFrame([out[1] for out in outputs])
    return results, timings


def _relative_cost(model: str, distance: str) -> float:
    return _RELATIVE_COST.get((model, distance), _RELATIVE_COST.get(distance, 1.0))


def interval_series(results: pd.DataFrame) -> pd.DataFrame:
    """Algorithm 1's return value per interval: mean clipped normalised surprise over the interval's users."""
    return (
        results.groupby(["run", "model", "distance", "recommender", "interval"], sort=False)["normalised"]
        .mean()
        .rename("mean_normalised")
        .reset_index()
    )


def summarise_table2(results: pd.DataFrame) -> pd.DataFrame:
    """Table 2 shape: median, mean and standard deviation (ddof = 1) of the interval series per model x distance x
    recommender, with the number of intervals, of user lists, and the share of clipped values."""
    series = interval_series(results)
    stats = (
        series.groupby(["run", "model", "distance", "recommender"], sort=False)["mean_normalised"]
        .agg(median="median", mean="mean", sd="std", n_intervals="count")
        .reset_index()
    )
    extra = (
        results.groupby(["run", "model", "distance", "recommender"], sort=False)
        .agg(n_lists=("normalised", "size"), n_undefined=("normalised", lambda s: int(s.isna().sum())),
             clipped_share=("clipped", "mean"))
        .reset_index()
    )
    table = stats.merge(extra, on=["run", "model", "distance", "recommender"])
    table["distance"] = table["distance"].map(lambda d: DISTANCE_LABELS.get(d, d))
    return table


def table2_wide(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`summarise_table2` in the paper's Table 2 layout: one row per model and distance, the columns
    ``<recommender>_<median|mean|sd>`` for MSI, kNN and LSI in that order (those present)."""
    summary = summary.drop(columns="run")
    out = summary.pivot_table(index=["model", "distance"], columns="recommender",
                              values=["median", "mean", "sd"], sort=False)
    out.columns = [f"{rec}_{stat}" for stat, rec in out.columns]
    order = [f"{rec}_{stat}" for rec in ("MSI", "kNN", "LSI") for stat in ("median", "mean", "sd")]
    return out[[c for c in order if c in out.columns]].reset_index()


#: Tolerance of the ordering check: a difference above ``-ORDER_TOLERANCE`` counts as holding (rounding, not order).
ORDER_TOLERANCE = 1e-12


def ordering_check(results: pd.DataFrame) -> pd.DataFrame:
    """The predicted order MSI >= kNN >= LSI, per model x distance cell and inequality, on paired user lists (the
    three recommenders of a user and interval see the same sample of unknown items). Columns: the mean difference,
    the share of lists where it holds, the number of lists with all three scores defined, whether it holds on the
    means, and whether a violated mean is within noise (less than twice its standard error over the lists)."""
    paired = results.pivot_table(index=["model", "distance", "interval", "user_id"], columns="recommender",
                                 values="normalised").reset_index()
    rows = []
    for (model, distance), cell in paired.groupby(["model", "distance"], sort=False):
        cell = cell.dropna(subset=["MSI", "kNN", "LSI"])
        for upper, lower in (("MSI", "kNN"), ("kNN", "LSI")):
            diff = cell[upper] - cell[lower]
            se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.nan
            rows.append({"model": model, "distance": DISTANCE_LABELS[distance],
                         "inequality": f"{upper} >= {lower}",
                         "mean_difference": diff.mean(), "share_of_lists_holding": (diff >= -ORDER_TOLERANCE).mean(),
                         "lists": len(diff), "holds_on_means": bool(diff.mean() >= -ORDER_TOLERANCE),
                         "within_noise": bool(diff.mean() < 0 and abs(diff.mean()) < 2 * se)})
    return pd.DataFrame(rows)


def settings_record(settings: OnePlusRandomSettings) -> dict:
    """The settings as a flat dict (for a table saying which parameters produced which numbers)."""
    record = asdict(settings)
    record["recommenders"] = ",".join(settings.recommenders)
    return record
