"""Item representations of Lima & Peres (2018), section 4.2, and the item-to-item distances each one admits.

Models (the paper's wording in quotes; what this project does differently is said plainly):

- **C** — *"a traditional vector space model of semantics (or count-based VSM). It uses the short description
  linked to an item ... Before computing tf-idf scores, the terms were stemmed by means of the Snowball algorithm."*
  MovieLens releases have no descriptions, so the text of an item here is its **title (without the year), its
  genres and the tags users gave it** (:func:`item_text`). Terms are lower-cased, English stop words removed
  (scikit-learn's list: the NLTK list the paper used needs a corpus download), Snowball-stemmed (NLTK), then tf-idf
  weighted (scikit-learn). The paper rejected descriptions with fewer than 13 terms; titles plus genres are far
  shorter (only 252 of the 9,742 movies of ml-latest-small reach 13 terms), so ``min_terms`` defaults to 1 (the
  paper's 13 is a parameter away).
- **P** — *"a distributed vector space model of semantics (or prediction-based VSM) ... extracted through an
  implementation of the Paragraph Vector, which does not require stop words removal or stemming."* gensim
  ``Doc2Vec`` on the same text, one worker, a fixed seed and a deterministic hash function so that two runs give
  the same vectors; ``vector_size`` and ``epochs`` are small by default for speed (documented on the builder).
- **U** — *"a user-item model. Each item i is represented as a vector v_i of a length equal to the number of
  users ... the rating the user u_j has attributed to item i, or zero ... The items without any rating were
  rejected."*
- **N** — *"a NPMI score model. The model consists of two probability distributions, P(i) and P(i, j): the first is
  estimated as the proportion of users who have been exposed to each item i, and the latter as the proportion of
  users who have been exposed to both items i and j. The distance ... is calculated by means of the NPMI score
  (which measures similarity), and then inverted and rescaled so that the image [-1, 1] is mapped to [0, 1]."*

As in the paper's *preprocessing stage* ("a distance matrix is computed for each pair of items in the dataset"),
models are built once from the whole dataset, before segmentation.

Valid model x distance pairs (:data:`VALID_DISTANCES`) follow the paper: *"The Jaccard distance, Jensen-Shannon
divergence, and Aitchison distance require compositional data, which means that they can only be applied to
vectors from Models C and U; and the NPMI score requires an NPMI score model"*; these are exactly the 13 rows of
its Table 2. Distances on vectors:

- Euclidean and cosine: scikit-learn.
- Jaccard, *"applied as described in [Jurafsky & Martin]"* to real vectors: the weighted Jaccard
  ``1 - sum(min(a, b)) / sum(max(a, b))`` for non-negative vectors, with ``sum(max) = |a|_1 + |b|_1 - sum(min)``
  and ``sum(min)`` summed over the components both vectors use only.
- Jensen–Shannon divergence (natural log, in [0, ln 2]; SciPy) and Aitchison distance (Euclidean distance of
  centred log-ratios) on vectors whose zeros are replaced by the Bayesian-multiplicative treatment with the Perks
  prior (*"When needed, smoothing was applied using Bayesian Multiplicative Treatment (BMT) with Perks prior"*),
  with the definitions of :mod:`recjudge.surprise.distances`; the block computations here are vectorised forms of its
  vector functions and are tested against them.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.metrics.pairwise import euclidean_distances

MODEL_NAMES = ("C", "P", "U", "N")
#: Model -> distances the paper reports for it (Table 2), in the paper's order.
VALID_DISTANCES: dict[str, tuple[str, ...]] = {
    "C": ("euclidean", "cosine", "jaccard", "jensen_shannon", "aitchison"),
    "P": ("euclidean", "cosine"),
    "U": ("euclidean", "cosine", "jaccard", "jensen_shannon", "aitchison"),
    "N": ("npmi",),
}
#: Display names used in tables (the paper's spelling).
DISTANCE_LABELS = {
    "euclidean": "Euclidean",
    "cosine": "cosine",
    "jaccard": "Jaccard",
    "jensen_shannon": "Jensen-Shannon",
    "aitchison": "Aitchison",
    "npmi": "NPMI",
}


def model_distance_pairs(models: tuple[str, ...] = MODEL_NAMES) -> list[tuple[str, str]]:
    """The (model, distance) cells of Table 2, restricted to ``models``."""
    return [(model, distance) for model in models for distance in VALID_DISTANCES[model]]


def check_pair(model: str, distance: str) -> None:
    """Raise a clear error for a pair the paper rules out."""
    if model not in VALID_DISTANCES:
        raise ValueError(f"unknown item model {model!r}; expected one of {MODEL_NAMES}")
    if distance not in VALID_DISTANCES[model]:
        raise ValueError(
            f"distance {distance!r} is not valid for model {model}: the paper applies {VALID_DISTANCES[model]} "
            "(Jaccard, Jensen-Shannon and Aitchison need compositional vectors, NPMI needs the NPMI model)"
        )


# ----------------------------------------------------------------------------------------------------- text
_TOKEN = re.compile(r"[a-z0-9]+")
_YEAR_SUFFIX = re.compile(r"\s*\(\s*\d{4}\s*(?:-\s*\d{0,4}\s*)?\)\s*$")


def item_text(items: pd.DataFrame, tags: pd.DataFrame | None = None) -> pd.Series:
    """Text per ``item_id``: title without its "(year)", the genres, and every tag users attached to the item
    (in time order), joined by spaces. MovieLens has no item descriptions; this is the substitute."""
    titles = items.set_index("item_id")["title"].fillna("").astype(str).str.replace(_YEAR_SUFFIX, "", regex=True)
    genres = items.set_index("item_id")["genres"].map(
        lambda value: " ".join(g for g in (value or ()) if g and g != "(no genres listed)")
    )
    text = titles + " " + genres
    if tags is not None and len(tags):
        ordered = tags.sort_values("timestamp", kind="stable") if "timestamp" in tags.columns else tags
        joined = ordered.groupby("item_id")["tag"].agg(lambda values: " ".join(map(str, values)))
        text = text + " " + joined.reindex(text.index).fillna("")
    return text.str.strip().rename("text")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _content_analyzer() -> Callable[[str], list[str]]:
    from nltk.stem.snowball import SnowballStemmer
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    stemmer = SnowballStemmer("english")

    def analyse(text: str) -> list[str]:
        return [stemmer.stem(token) for token in _tokens(text) if token not in ENGLISH_STOP_WORDS]

    return analyse


# ---------------------------------------------------------------------------------------------------- model
@dataclass
class ItemModel:
    """One item representation: ``vectors`` (row ``r`` describes ``item_ids[r]``) or, for model N, the binary
    user-exposure matrix (items x users)."""

    name: str
    item_ids: np.ndarray
    vectors: np.ndarray | sparse.csr_matrix
    note: str = ""
    _position: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.name not in MODEL_NAMES:
            raise ValueError(f"unknown item model {self.name!r}; expected one of {MODEL_NAMES}")
        if self.vectors.shape[0] != len(self.item_ids):
            raise ValueError(f"model {self.name}: {self.vectors.shape[0]} vectors for {len(self.item_ids)} items")
        self._position = {item: row for row, item in enumerate(self.item_ids.tolist())}

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    def positions(self, item_ids) -> np.ndarray:
        """Row positions of ``item_ids``; items the model does not describe are -1."""
        return np.array([self._position.get(item, -1) for item in np.asarray(item_ids).tolist()], dtype=np.int64)

    def distance(self, distance: str) -> "PairwiseDistance":
        check_pair(self.name, distance)
        return PairwiseDistance(self, distance)


def build_content_model(
    items: pd.DataFrame, tags: pd.DataFrame | None = None, *, min_terms: int = 1, min_df: int = 1
) -> ItemModel:
    """Model C: tf-idf (scikit-learn) of stemmed, stop-word-free item text; items with fewer than ``min_terms``
    terms are rejected (the paper: 13 terms of a description)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    text = item_text(items, tags)
    analyse = _content_analyzer()
    terms = text.map(analyse)
    kept = terms[terms.map(len) >= min_terms]
    if kept.empty:
        raise ValueError(f"model C: no item has at least {min_terms} terms")
    vectoriser = TfidfVectorizer(analyzer=lambda doc: doc, min_df=min_df)
    matrix = vectoriser.fit_transform(kept.tolist()).tocsr().astype(np.float64)
    nonempty = np.asarray(matrix.getnnz(axis=1) > 0)
    return ItemModel(
        "C",
        kept.index.to_numpy()[nonempty],
        matrix[nonempty],
        note=f"tf-idf of title+genres+tags, {matrix.shape[1]} stemmed terms, {int(nonempty.sum())} items",
    )


def _stable_hash(text: str) -> int:
    # Python's built-in hash of a str changes between processes; gensim seeds word vectors with it.
    return zlib.crc32(text.encode("utf-8"))


def build_paragraph_model(
    items: pd.DataFrame,
    tags: pd.DataFrame | None = None,
    *,
    vector_size: int = 32,
    epochs: int = 20,
    window: int = 5,
    min_count: int = 1,
    seed: int = 0,
) -> ItemModel:
    """Model P: gensim ``Doc2Vec`` (PV-DM) paragraph vectors of the item text, no stop-word removal or stemming.
    ``workers=1``, ``seed`` and a process-independent hash function make the vectors reproducible. The defaults
    (32 dimensions, 20 epochs) are chosen for speed on short texts; the paper does not give its settings."""
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    text = item_text(items, tags)
    tokens = text.map(_tokens)
    tokens = tokens[tokens.map(len) > 0]
    corpus = [TaggedDocument(words, [row]) for row, words in enumerate(tokens.tolist())]
    model = Doc2Vec(
        corpus,
        vector_size=vector_size,
        window=window,
        min_count=min_count,
        epochs=epochs,
        seed=seed,
        workers=1,
        hashfxn=_stable_hash,
    )
    vectors = np.vstack([model.dv[row] for row in range(len(corpus))]).astype(np.float64)
    return ItemModel(
        "P",
        tokens.index.to_numpy(),
        vectors,
        note=f"Doc2Vec PV-DM, {vector_size} dims, {epochs} epochs, seed {seed}, on title+genres+tags",
    )


def _item_user_matrix(
    ratings: pd.DataFrame, values_of: Callable[[pd.DataFrame], np.ndarray]
) -> tuple[np.ndarray, sparse.csr_matrix]:
    deduplicated = ratings.drop_duplicates(["user_id", "item_id"], keep="last")
    item_codes, item_ids = pd.factorize(deduplicated["item_id"], sort=True)
    user_codes, _ = pd.factorize(deduplicated["user_id"], sort=True)
    matrix = sparse.csr_matrix(
        (values_of(deduplicated), (item_codes, user_codes)),
        shape=(len(item_ids), int(user_codes.max()) + 1),
    )
    return np.asarray(item_ids), matrix


def build_user_item_model(ratings: pd.DataFrame) -> ItemModel:
    """Model U: one vector per rated item, one component per user (the rating, or 0)."""
    item_ids, matrix = _item_user_matrix(ratings, lambda frame: frame["rating"].to_numpy(dtype=np.float64))
    return ItemModel("U", item_ids, matrix, note=f"ratings of {matrix.shape[1]} users for {len(item_ids)} items")


def build_npmi_model(ratings: pd.DataFrame) -> ItemModel:
    """Model N: binary exposure (user rated the item) per item and user; P(i), P(i, j) are read from it."""
    item_ids, matrix = _item_user_matrix(ratings, lambda frame: np.ones(len(frame)))
    return ItemModel("N", item_ids, matrix, note=f"exposure of {matrix.shape[1]} users to {len(item_ids)} items")


def build_item_model(
    name: str, items: pd.DataFrame, ratings: pd.DataFrame, tags: pd.DataFrame | None = None, **options
) -> ItemModel:
    """Build model ``name`` (C, P, U or N) from a MovieLens-shaped dataset."""
    if name == "C":
        return build_content_model(items, tags, **options)
    if name == "P":
        return build_paragraph_model(items, tags, **options)
    if name == "U":
        return build_user_item_model(ratings)
    if name == "N":
        return build_npmi_model(ratings)
    raise ValueError(f"unknown item model {name!r}; expected one of {MODEL_NAMES}")


# ------------------------------------------------------------------------------------------------ distances
def _xlogx(values: np.ndarray) -> np.ndarray:
    return np.where(values > 0, values * np.log(np.where(values > 0, values, 1.0)), 0.0)


class _SmoothedRows:
    """Rows of a non-negative sparse matrix after BMT/Perks zero replacement, kept sparse: row ``i`` equals
    ``zero_value[i]`` off its support and ``values`` (a CSR matrix with the original support) on it. This is
    exactly :func:`recjudge.distances.bayesian_multiplicative_replacement` (Perks: ``s = 1``, ``t = 1/D``), stored
    so that distances cost time in the number of non-zeros rather than in the number of parts ``D``."""

    def __init__(self, matrix: sparse.csr_matrix) -> None:
        matrix = sparse.csr_matrix(matrix, dtype=np.float64)
        matrix.eliminate_zeros()
        if (matrix.data < 0).any():
            raise ValueError("zero replacement needs non-negative vectors")
        self.parts = matrix.shape[1]
        totals = np.asarray(matrix.sum(axis=1)).ravel()
        if (totals == 0).any():
            raise ValueError(f"row {int(np.flatnonzero(totals == 0)[0])} is all zeros (no composition)")
        n_zeros = self.parts - matrix.getnnz(axis=1)
        self.zero_value = (1.0 / self.parts) / (totals + 1.0)
        shrink = 1.0 - n_zeros * self.zero_value
        self.values = sparse.csr_matrix(sparse.diags(shrink / totals) @ matrix)
        self.n_zeros = n_zeros


class PairwiseDistance:
    """Distances between items of one model under one distance function (``block(rows, columns)`` with row
    positions of the model). Euclidean and cosine use scikit-learn (sparse-aware). Jaccard, Jensen-Shannon and
    Aitchison are evaluated on the sparse structure (closed forms below), which gives the same numbers as the
    dense definitions of :mod:`recjudge.surprise.distances` — the tests check it — at a cost in non-zeros, not in
    parts."""

    def __init__(self, model: ItemModel, distance: str) -> None:
        check_pair(model.name, distance)
        self.model = model
        self.name = distance
        vectors = model.vectors
        self._sliced: tuple[bytes, object] | None = None
        if distance == "cosine":
            from sklearn.preprocessing import normalize

            self._data = normalize(vectors)  # unit rows, once: cosine distance = 1 - dot product
            return
        if distance == "euclidean":
            self._data = vectors
            squared = vectors.multiply(vectors).sum(axis=1) if sparse.issparse(vectors) else (vectors**2).sum(axis=1)
            self._squared_norms = np.asarray(squared, dtype=np.float64).ravel()
            return
        if distance == "npmi":
            exposure = sparse.csr_matrix(vectors, dtype=np.float64)
            exposure.data[:] = 1.0
            self._data = exposure
            self._n_users = exposure.shape[1]
            self._counts = np.asarray(exposure.sum(axis=1)).ravel()
            return
        matrix = sparse.csr_matrix(vectors, dtype=np.float64)
        matrix.eliminate_zeros()
        if (matrix.data < 0).any():
            raise ValueError(f"{distance} needs non-negative vectors; model {model.name} has negative components")
        if distance == "jaccard":
            self._data = matrix
            self._totals = np.asarray(matrix.sum(axis=1)).ravel()
            return
        smoothed = _SmoothedRows(matrix)
        self._smoothed = smoothed
        if distance == "jensen_shannon":
            # sum_k g(p_k) with g(x) = x log x, split into support and zero parts
            self._self_terms = np.asarray(
                sparse.csr_matrix((_xlogx(smoothed.values.data), smoothed.values.indices, smoothed.values.indptr),
                                  shape=smoothed.values.shape).sum(axis=1)
            ).ravel() + smoothed.n_zeros * _xlogx(smoothed.zero_value)
        else:  # aitchison: u_k = log p_k - log(zero value) is zero off the support
            values = smoothed.values
            logs = np.log(values.data) - np.repeat(np.log(smoothed.zero_value), np.diff(values.indptr))
            self._log_ratios = sparse.csr_matrix((logs, values.indices, values.indptr), shape=values.shape)
            self._log_sq = np.asarray(self._log_ratios.multiply(self._log_ratios).sum(axis=1)).ravel()
            self._log_mean = np.asarray(self._log_ratios.sum(axis=1)).ravel() / smoothed.parts

    #: Blocks of at most this many columns sum products over shared components (see :meth:`_products`).
    narrow = 64
    #: Jensen-Shannon terms kept per zero value of a column, in numbers (8 bytes each; 64 MB).
    terms_budget = 1 << 23

    def _cached(self, rows: np.ndarray, build):
        key = rows.tobytes()
        if self._sliced is None or self._sliced[0] != key:
            self._sliced = (key, build())
        return self._sliced[1]

    def _component_rows(self, matrix: sparse.csr_matrix, rows: np.ndarray):
        # the rows' entries grouped by component: row k lists (row position, value) of every row using component k
        part = matrix[rows]
        return part, part.T.tocsr()

    def _jensen_shannon_rows(self, rows: np.ndarray) -> dict:
        # everything about the rows that does not depend on the column, computed once per row set
        part = self._smoothed.values[rows]
        zero_rows = self._smoothed.zero_value[rows]
        distinct_zero, zero_index = np.unique(zero_rows, return_inverse=True)
        distinct_values, value_index = np.unique(part.data, return_inverse=True)
        row_of_value = np.repeat(np.arange(len(rows)), np.diff(part.indptr))
        # the entries in component order (rows ascending within a component), as a CSC copy would hold them
        by_component = np.argsort(part.indices, kind="stable")
        component_starts = np.zeros(self._smoothed.parts + 1, dtype=np.int64)
        np.cumsum(np.bincount(part.indices, minlength=self._smoothed.parts), out=component_starts[1:])
        return {"data": part.data, "row_of_value": row_of_value, "zero_rows": zero_rows,
                "distinct_zero": distinct_zero, "zero_index": zero_index, "nnz_rows": np.diff(part.indptr),
                "distinct_values": distinct_values, "value_index": value_index.ravel(),
                "entry_by_component": by_component, "row_by_component": row_of_value[by_component],
                "component_starts": component_starts, "self_terms": self._self_terms[rows], "terms_by_zero": {}}

    def _rows(self, matrix, rows: np.ndarray):
        # the same (large) row set is asked for again and again by a distance-column cache: slice it once
        return self._cached(rows, lambda: matrix[rows])

    def _products(self, matrix, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """``matrix[rows] @ matrix[columns].T`` as a dense array, with the bits of SciPy's sparse product.

        SciPy adds, for each (row, column), the products of the components both use in the order of the row's
        stored components; with sorted indices that is ascending component order, the order of the shared
        (row, column, component) triples, so a few columns are summed over those triples alone (the sparse
        product walks every stored entry of the rows for each call). Wide blocks use the sparse product."""
        if sparse.issparse(matrix) and matrix.has_sorted_indices and len(columns) <= self.narrow:
            part, by_component = self._cached(rows, lambda: self._component_rows(matrix, rows))
            result = np.empty((len(rows), len(columns)))
            for group, shared in self._shared_groups(by_component, matrix, columns):
                key = shared["row"] * len(group) + shared["column"]
                products = shared["row_value"] * shared["column_value"]
                result[:, group] = np.bincount(key, products, len(rows) * len(group)).reshape(len(rows), len(group))
            return result
        part = self._cached(rows, lambda: self._component_rows(matrix, rows))[0] if sparse.issparse(matrix) else (
            self._rows(matrix, rows))
        products = part @ matrix[columns].T
        return products.toarray() if sparse.issparse(products) else np.asarray(products)

    def block(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Distance matrix (len(rows) x len(columns)) between items at model positions ``rows`` and ``columns``."""
        rows = np.asarray(rows, dtype=np.int64)
        columns = np.asarray(columns, dtype=np.int64)
        if len(rows) == 0 or len(columns) == 0:
            return np.zeros((len(rows), len(columns)))
        if self.name == "euclidean":
            if not sparse.issparse(self._data):
                return euclidean_distances(
                    self._rows(self._data, rows), self._data[columns],
                    X_norm_squared=self._squared_norms[rows][:, None],
                    Y_norm_squared=self._squared_norms[columns][None, :],
                )
            # scikit-learn's euclidean_distances on float64 input, step by step (tests check the bits)
            distances = -2 * self._products(self._data, rows, columns)
            distances += self._squared_norms[rows][:, None]
            distances += self._squared_norms[columns][None, :]
            np.maximum(distances, 0, out=distances)
            return np.sqrt(distances, out=distances)
        if self.name == "cosine":
            distances = np.subtract(1.0, self._products(self._data, rows, columns))
            return np.clip(distances, 0.0, 2.0, out=distances)
        if self.name == "npmi":
            co = self._products(self._data, rows, columns)
            return npmi_distance(co, self._counts[rows], self._counts[columns], self._n_users)
        if self.name == "aitchison":
            # ||clr p - clr q||^2 = ||u - w||^2 - D (mean u - mean w)^2, u, w the sparse log-ratios above
            cross = self._products(self._log_ratios, rows, columns)
            squared = (self._log_sq[rows][:, None] + self._log_sq[columns][None, :] - 2.0 * cross
                       - self._smoothed.parts * (self._log_mean[rows][:, None] - self._log_mean[columns][None, :]) ** 2)
            np.clip(squared, 0.0, None, out=squared)
            return np.sqrt(squared, out=squared)
        if self.name == "jaccard":
            return self._jaccard(rows, columns)
        return self._jensen_shannon(rows, columns)

    def _shared_groups(self, by_component: sparse.csr_matrix, matrix: sparse.csr_matrix, columns: np.ndarray,
                       budget: int = 1 << 22):
        """The (row, column, component) triples where a row and a column both have a non-zero, for groups of
        ``columns`` small enough that the triples fit ``budget``.

        Yields ``(group, shared)``: the column positions in ``columns`` and a dict with, per triple, ``row`` (row
        position), ``column`` (position in the group), ``row_value`` and ``column_value``. Triples come ordered by
        column, then component, then row, so that a per-(row, column) sum over them adds its terms in ascending
        component order."""
        # the columns' stored entries, as ``matrix[columns]`` holds them (read from the arrays: no sparse slicing)
        first = matrix.indptr[columns]
        entries_per_column = matrix.indptr[columns + 1] - first
        column_end = np.cumsum(entries_per_column)
        stored = np.arange(int(column_end[-1]) if len(columns) else 0) + np.repeat(
            first - (column_end - entries_per_column), entries_per_column)
        component, column_values = matrix.indices[stored], matrix.data[stored]
        column_start = np.concatenate([[0], column_end])
        starts = by_component.indptr[component]
        lengths = by_component.indptr[component + 1] - starts
        column_of_entry = np.repeat(np.arange(len(columns)), entries_per_column)
        # triples per column, as running totals (integers): a group's total is a difference of two of them
        cumulative = np.cumsum(np.bincount(column_of_entry, lengths, len(columns)).astype(np.int64))
        begin = 0
        while begin < len(columns):
            before = int(cumulative[begin - 1]) if begin else 0
            end = max(begin + 1, int(np.searchsorted(cumulative, before + budget, side="right")))
            lo, hi = column_start[begin], column_start[end]
            n = lengths[lo:hi]
            offsets = np.cumsum(n) - n
            total = int(n.sum())
            index = np.arange(total) - np.repeat(offsets, n) + np.repeat(starts[lo:hi], n)
            entry = np.repeat(np.arange(lo, hi), n)
            shared = {"row": by_component.indices[index], "column": column_of_entry[entry] - begin,
                      "row_value": by_component.data[index], "column_value": column_values[entry]}
            yield np.arange(begin, end), shared
            begin = end

    def _jaccard(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        # 1 - sum(min) / sum(max), sum(max) = |a|_1 + |b|_1 - sum(min); sum(min) only runs over the components both
        # vectors use, so it is a sum over the shared (row, column, component) triples, added in ascending
        # component order per pair as a per-row loop over components would.
        _, by_component = self._cached(rows, lambda: self._component_rows(self._data, rows))
        result = np.empty((len(rows), len(columns)))
        for group, shared in self._shared_groups(by_component, self._data, columns):
            key = shared["row"] * len(group) + shared["column"]
            mins = np.bincount(key, np.minimum(shared["row_value"], shared["column_value"]),
                               len(rows) * len(group)).reshape(len(rows), len(group))
            maxs = self._totals[rows][:, None] + self._totals[columns[group]][None, :]
            maxs -= mins
            if (maxs > 0).all():  # no all-zero vector (always, for the paper's models): skip the guard
                result[:, group] = 1.0 - mins / maxs
            else:
                with np.errstate(invalid="ignore", divide="ignore"):
                    result[:, group] = np.where(maxs > 0, 1.0 - mins / np.where(maxs > 0, maxs, 1.0), 0.0)
        return np.clip(result, 0.0, 1.0, out=result)

    def _jensen_shannon(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        # JS(p, q) = (sum g(p) + sum g(q)) / 2 - sum g(m), m = (p + q) / 2, g(x) = x log x (every smoothed part is
        # positive). sum g(m) is split into the components on p's support, those on q's support only, and those on
        # neither (both at their zero values). The middle part is sum over q's support of g((c_p + q_k) / 2)
        # minus the same sum over the components p also uses; the first sum depends on p only through its zero
        # value c_p, so it is evaluated once per distinct c_p (ratings sums repeat a lot).
        # On p's support, a component q does not use has q_k = c_q, so its term g((p_k + c_q) / 2) is evaluated
        # once per distinct p_k (ratings repeat) and only the entries on q's support get their own term; every term
        # is the same expression of the same two numbers, and the per-row sums add them in the same order, so the
        # values do not depend on this sharing.
        smoothed = self._smoothed
        cached = self._cached(rows, lambda: self._jensen_shannon_rows(rows))
        data, row_of_value, zero_rows = cached["data"], cached["row_of_value"], cached["zero_rows"]
        distinct_zero, zero_index, nnz_rows = cached["distinct_zero"], cached["zero_index"], cached["nnz_rows"]
        distinct_values, value_index = cached["distinct_values"], cached["value_index"]
        component_starts = cached["component_starts"]
        n_rows = len(rows)
        # one contiguous row per column (the block returned is its transpose): writes stay in cache
        result = np.empty((len(columns), n_rows))
        values = smoothed.values
        terms_by_zero = cached["terms_by_zero"]
        for j, column in enumerate(columns):
            start, end = values.indptr[column], values.indptr[column + 1]
            support, support_values = values.indices[start:end], values.data[start:end]
            zero_column = smoothed.zero_value[column]
            # the rows' entries on q's support, in component order, then row order
            first = component_starts[support]
            counts = component_starts[support + 1] - first
            shared = np.arange(int(counts.sum())) + np.repeat(first - (np.cumsum(counts) - counts), counts)
            shared_rows = cached["row_by_component"][shared]
            shared_entries = cached["entry_by_component"][shared]
            shared_column = np.repeat(np.arange(len(support)), counts)
            distinct_terms = terms_by_zero.get(zero_column)
            if distinct_terms is None:  # columns with the same zero value share these terms (kept up to a budget)
                mean = (distinct_values + zero_column) / 2.0
                distinct_terms = mean * np.log(mean)
                if len(terms_by_zero) * len(distinct_values) < self.terms_budget:
                    terms_by_zero[zero_column] = distinct_terms
            terms = distinct_terms[value_index]
            mean = (data[shared_entries] + support_values[shared_column]) / 2.0
            terms[shared_entries] = mean * np.log(mean)
            on_rows = np.bincount(row_of_value, terms, n_rows)
            mean = (distinct_zero[:, None] + support_values[None, :]) / 2.0
            on_column_all = (mean * np.log(mean)).sum(axis=1)[zero_index]
            mean = (zero_rows[shared_rows] + support_values[shared_column]) / 2.0
            on_column_only = on_column_all - np.bincount(shared_rows, mean * np.log(mean), n_rows)
            union = nnz_rows + len(support) - np.bincount(shared_rows, minlength=n_rows)
            mean = (zero_rows + zero_column) / 2.0
            on_neither = (smoothed.parts - union) * mean * np.log((distinct_zero + zero_column) / 2.0)[zero_index]
            result[j] = (cached["self_terms"] + self._self_terms[column]) / 2.0 - (
                on_rows + on_column_only + on_neither
            )
        return np.clip(result, 0.0, np.log(2.0), out=result).T


def npmi_distance(co_counts: np.ndarray, counts_rows: np.ndarray, counts_cols: np.ndarray, n_users: int):
    """``(1 - npmi) / 2`` from co-exposure counts: NPMI = log(P(i,j) / (P(i) P(j))) / -log P(i,j) (Bouma 2009),
    -1 when the items never co-occur and +1 when both were seen by every user."""
    p_joint = co_counts / n_users
    p_rows = counts_rows[:, None] / n_users
    p_cols = counts_cols[None, :] / n_users
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(p_joint) - np.log(p_rows) - np.log(p_cols)
        npmi = pmi / -np.log(p_joint)
    npmi = np.where(co_counts == 0, -1.0, npmi)
    npmi = np.where(p_joint >= 1.0, 1.0, npmi)
    npmi = np.clip(npmi, -1.0, 1.0)
    return (1.0 - npmi) / 2.0
