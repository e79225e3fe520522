"""Item models C, P, U, N and their distance blocks, checked against recjudge.surprise.distances' dense definitions."""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from scipy.spatial import distance as spd

from recjudge.surprise import distances
from recjudge.surprise.item_models import (
    VALID_DISTANCES,
    ItemModel,
    build_content_model,
    build_npmi_model,
    build_paragraph_model,
    build_user_item_model,
    check_pair,
    item_text,
    model_distance_pairs,
    npmi_distance,
)


@pytest.fixture
def items():
    return pd.DataFrame(
        {
            "item_id": [1, 2, 3, 4],
            "title": ["Toy Story (1995)", "Jumanji (1995)", "Heat (1995)", "Running Men (2001)"],
            "year": [1995.0, 1995.0, 1995.0, 2001.0],
            "genres": [("Animation", "Children"), ("Adventure", "Children"), ("Action", "Crime"), ("Comedy",)],
        }
    )


@pytest.fixture
def tags():
    return pd.DataFrame(
        {"user_id": [1, 2], "item_id": [3, 3], "tag": ["heist", "running"],
         "timestamp": pd.to_datetime([1, 2], unit="s", utc=True)}
    )


@pytest.fixture
def ratings():
    return pd.DataFrame(
        {
            "user_id": [1, 1, 2, 2, 3],
            "item_id": [1, 2, 1, 3, 1],
            "rating": [4.0, 2.0, 5.0, 3.0, 1.0],
            "timestamp": pd.to_datetime([1, 2, 3, 4, 5], unit="s", utc=True),
        }
    )


def test_the_valid_pairs_are_the_thirteen_rows_of_table_2():
    assert len(model_distance_pairs()) == 13
    assert VALID_DISTANCES["P"] == ("euclidean", "cosine") and VALID_DISTANCES["N"] == ("npmi",)
    with pytest.raises(ValueError, match="compositional"):
        check_pair("P", "jaccard")
    with pytest.raises(ValueError, match="unknown item model"):
        check_pair("X", "cosine")


def test_item_text_is_title_without_year_genres_and_tags(items, tags):
    text = item_text(items, tags)
    assert text[1] == "Toy Story Animation Children"
    assert text[3] == "Heat Action Crime heist running"


def test_content_model_stems_and_drops_stop_words(items, tags):
    model = build_content_model(items, tags)
    assert model.name == "C" and model.item_ids.tolist() == [1, 2, 3, 4]
    # "Running" (title of 4) and "running" (tag of 3) share the stem "run": their tf-idf vectors overlap
    overlap = model.vectors[2].multiply(model.vectors[3]).sum()
    assert overlap > 0
    assert model.vectors[0].multiply(model.vectors[2]).sum() == 0
    with pytest.raises(ValueError, match="13 terms"):
        build_content_model(items, tags, min_terms=13)


def test_paragraph_vectors_are_reproducible(items, tags):
    first = build_paragraph_model(items, tags, vector_size=8, epochs=3, seed=1)
    second = build_paragraph_model(items, tags, vector_size=8, epochs=3, seed=1)
    assert first.vectors.shape == (4, 8)
    np.testing.assert_array_equal(first.vectors, second.vectors)


def test_user_item_and_npmi_models_hold_ratings_and_exposure(ratings):
    user_item = build_user_item_model(ratings)
    assert user_item.item_ids.tolist() == [1, 2, 3]
    np.testing.assert_array_equal(user_item.vectors.toarray(), [[4, 5, 1], [2, 0, 0], [0, 3, 0]])
    npmi = build_npmi_model(ratings)
    np.testing.assert_array_equal(npmi.vectors.toarray(), [[1, 1, 1], [1, 0, 0], [0, 1, 0]])
    assert user_item.positions([3, 99]).tolist() == [2, -1]


@pytest.fixture
def sparse_vectors():
    rng = np.random.default_rng(7)
    dense = np.round(rng.random((15, 11)) * (rng.random((15, 11)) < 0.35) * 5, 1)
    dense[dense.sum(axis=1) == 0, 0] = 1.0
    return dense


@pytest.mark.parametrize(
    "distance, reference",
    [
        ("euclidean", lambda a, b: distances.cross_distances(a, b, "euclidean")),
        ("cosine", lambda a, b: distances.cross_distances(a, b, "cosine")),
        ("jaccard", lambda a, b: distances.cross_distances(a, b, "jaccard")),
        ("jensen_shannon", lambda a, b: distances.cross_distances(a, b, "jensen_shannon", smooth_zeros=True)),
        ("aitchison", lambda a, b: distances.cross_distances(a, b, "aitchison")),
    ],
)
def test_sparse_blocks_equal_the_dense_definitions(sparse_vectors, distance, reference):
    model = ItemModel("U", np.arange(15), sparse.csr_matrix(sparse_vectors))
    rows, columns = np.array([0, 3, 4, 14, 7]), np.array([2, 0, 9, 9])
    got = model.distance(distance).block(rows, columns)
    np.testing.assert_allclose(got, reference(sparse_vectors[rows], sparse_vectors[columns]), atol=1e-12)


def test_npmi_block_equals_the_dense_npmi_distance(sparse_vectors):
    exposure = (sparse_vectors > 0).astype(float)
    model = ItemModel("N", np.arange(15), sparse.csr_matrix(exposure))
    rows, columns = np.arange(15), np.array([1, 5, 6])
    got = model.distance("npmi").block(rows, columns)
    want = distances.npmi_distance_matrix(exposure.T)[np.ix_(rows, columns)]
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_compositional_distances_refuse_negative_vectors():
    model = ItemModel("C", np.arange(2), np.array([[1.0, -1.0], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="non-negative"):
        model.distance("jaccard")


@pytest.mark.parametrize("seed", range(6))
def test_vectorised_jaccard_and_jensen_shannon_equal_scipy_on_random_inputs(seed):
    # half-star ratings make zero values repeat (the per-zero-value sums are shared); sparse rows make the shared
    # (row, column, component) triples few; both closed forms must still give the textbook definitions
    rng = np.random.default_rng(seed)
    n_items, n_parts = int(rng.integers(5, 30)), int(rng.integers(3, 25))
    dense = np.round(rng.integers(1, 11, (n_items, n_parts)) / 2 * (rng.random((n_items, n_parts)) < 0.3), 1)
    dense[dense.sum(axis=1) == 0, rng.integers(n_parts)] = 0.5
    model = ItemModel("U", np.arange(n_items), sparse.csr_matrix(dense))
    rows = rng.permutation(n_items)[: max(1, n_items - 2)]
    columns = rng.integers(0, n_items, int(rng.integers(1, 12)))

    smoothed = distances.bayesian_multiplicative_replacement(dense)
    js = np.array([[spd.jensenshannon(smoothed[r], smoothed[c]) ** 2 for c in columns] for r in rows])
    np.testing.assert_allclose(model.distance("jensen_shannon").block(rows, columns), js, rtol=0, atol=1e-12)

    weighted = np.array([[1 - np.minimum(dense[r], dense[c]).sum() / np.maximum(dense[r], dense[c]).sum()
                          for c in columns] for r in rows])
    np.testing.assert_allclose(model.distance("jaccard").block(rows, columns), weighted, rtol=0, atol=1e-12)
    binary = ItemModel("U", np.arange(n_items), sparse.csr_matrix((dense > 0).astype(float)))
    scipy_binary = np.array([[spd.jaccard(dense[r] > 0, dense[c] > 0) for c in columns] for r in rows])
    np.testing.assert_allclose(binary.distance("jaccard").block(rows, columns), scipy_binary, rtol=0, atol=1e-12)


@pytest.mark.parametrize("distance", ["jaccard", "jensen_shannon"])
def test_vectorised_blocks_do_not_depend_on_how_columns_are_grouped(sparse_vectors, distance):
    # a distance cache asks for columns in whatever groups users need them: every grouping must give the same bits
    model = ItemModel("U", np.arange(15), sparse.csr_matrix(sparse_vectors))
    pairwise = model.distance(distance)
    rows, columns = np.arange(15), np.array([3, 1, 14, 1, 0, 8])
    together = pairwise.block(rows, columns)
    one_by_one = np.column_stack([pairwise.block(rows, columns[j : j + 1]) for j in range(len(columns))])
    assert np.array_equal(together, one_by_one)


def _jensen_shannon_per_column(pairwise, rows, columns):
    """The per-column sums the block computation replaced (one log per stored entry and column): the reference
    that the shared-term version must reproduce bit for bit."""
    smoothed = pairwise._smoothed
    part = smoothed.values[rows]
    part_csc = part.tocsc()
    row_of_value = np.repeat(np.arange(len(rows)), np.diff(part.indptr))
    zero_rows = smoothed.zero_value[rows]
    distinct_zero, zero_index = np.unique(zero_rows, return_inverse=True)
    result = np.empty((len(rows), len(columns)))
    dense_column = np.empty(smoothed.parts)
    for j, column in enumerate(columns):
        start, end = smoothed.values.indptr[column], smoothed.values.indptr[column + 1]
        support, support_values = smoothed.values.indices[start:end], smoothed.values.data[start:end]
        zero_column = smoothed.zero_value[column]
        dense_column.fill(zero_column)
        dense_column[support] = support_values
        mean = (part.data + dense_column[part.indices]) / 2.0
        on_rows = np.bincount(row_of_value, mean * np.log(mean), len(rows))
        mean = (distinct_zero[:, None] + support_values[None, :]) / 2.0
        on_column_all = (mean * np.log(mean)).sum(axis=1)[zero_index]
        shared = part_csc[:, support]
        shared_column = np.repeat(np.arange(len(support)), np.diff(shared.indptr))
        mean = (zero_rows[shared.indices] + support_values[shared_column]) / 2.0
        on_column_only = on_column_all - np.bincount(shared.indices, mean * np.log(mean), len(rows))
        union = np.diff(part.indptr) + len(support) - np.bincount(shared.indices, minlength=len(rows))
        mean = (zero_rows + zero_column) / 2.0
        on_neither = (smoothed.parts - union) * mean * np.log(mean)
        result[:, j] = (pairwise._self_terms[rows] + pairwise._self_terms[column]) / 2.0 - (
            on_rows + on_column_only + on_neither)
    return np.clip(result, 0.0, np.log(2.0))


@pytest.mark.parametrize("seed", range(5))
def test_jensen_shannon_shared_terms_give_the_per_column_sums_bit_for_bit(seed):
    # half-star ratings repeat, so many entries share one term; tf-idf-like weights almost never do
    rng = np.random.default_rng(seed)
    n_items, n_parts = int(rng.integers(20, 60)), int(rng.integers(5, 40))
    mask = rng.random((n_items, n_parts)) < 0.25
    weights = rng.integers(1, 11, (n_items, n_parts)) / 2 if seed % 2 else rng.random((n_items, n_parts))
    dense = weights * mask
    dense[dense.sum(axis=1) == 0, 0] = 1.0
    pairwise = ItemModel("U", np.arange(n_items), sparse.csr_matrix(dense)).distance("jensen_shannon")
    for rows in (np.arange(n_items), np.sort(rng.choice(n_items, n_items // 2, replace=False))):
        columns = rng.integers(0, n_items, 9)
        assert np.array_equal(pairwise.block(rows, columns), _jensen_shannon_per_column(pairwise, rows, columns))
    uncached = ItemModel("U", np.arange(n_items), sparse.csr_matrix(dense)).distance("jensen_shannon")
    uncached.terms_budget = 0  # no terms kept per zero value: the same bits
    assert np.array_equal(uncached.block(rows, columns), pairwise.block(rows, columns))


@pytest.mark.parametrize("seed", range(4))
def test_products_over_shared_components_have_the_bits_of_scipy_and_scikit_learn(seed):
    # few columns are summed over shared components, many through SciPy's product: both must be SciPy's bits, and
    # the distances built on them scikit-learn's (Euclidean) and the formulas' (cosine, NPMI, Aitchison)
    from sklearn.metrics.pairwise import euclidean_distances
    from sklearn.preprocessing import normalize

    rng = np.random.default_rng(seed)
    n_items, n_parts = int(rng.integers(30, 80)), int(rng.integers(5, 50))
    dense = rng.random((n_items, n_parts)) * (rng.random((n_items, n_parts)) < 0.3)
    dense[dense.sum(axis=1) == 0, 0] = 0.5
    model = ItemModel("U", np.arange(n_items), sparse.csr_matrix(dense))
    rows = np.sort(rng.choice(n_items, n_items - 5, replace=False))
    for width in (1, 3, 64, 65):
        columns = rng.integers(0, n_items, width)
        pairwise = model.distance("cosine")
        unit = normalize(model.vectors)
        expected = np.clip(1.0 - (unit[rows] @ unit[columns].T).toarray(), 0, 2)
        assert np.array_equal(pairwise.block(rows, columns), expected)
        squared = np.asarray(model.vectors.multiply(model.vectors).sum(axis=1)).ravel()
        want = euclidean_distances(model.vectors[rows], model.vectors[columns], X_norm_squared=squared[rows][:, None],
                                   Y_norm_squared=squared[columns][None, :])
        assert np.array_equal(model.distance("euclidean").block(rows, columns), want)
        exposure = ItemModel("N", np.arange(n_items), sparse.csr_matrix((dense > 0).astype(float)))
        npmi = exposure.distance("npmi")
        co = (exposure.vectors[rows] @ exposure.vectors[columns].T).toarray()
        assert np.array_equal(npmi.block(rows, columns), npmi_distance(co, npmi._counts[rows], npmi._counts[columns],
                                                                      n_parts))
        aitchison = model.distance("aitchison")
        narrow, aitchison.narrow = aitchison.narrow, 0  # every block through SciPy's product
        through_scipy = aitchison.block(rows, columns)
        aitchison.narrow = narrow
        assert np.array_equal(aitchison.block(rows, columns), through_scipy)


def test_products_of_rows_with_unsorted_components_fall_back_to_scipy():
    # SciPy then adds in storage order, not component order: the shared-component sums are not used
    matrix = sparse.csr_matrix((np.array([1.0, 2.0, 3.0, 0.5]), np.array([2, 0, 1, 2]), np.array([0, 2, 4])),
                               shape=(2, 3))
    assert not matrix.has_sorted_indices
    pairwise = ItemModel("U", np.arange(2), matrix).distance("cosine")
    assert np.array_equal(pairwise._products(matrix, np.arange(2), np.array([1])),
                          (matrix @ matrix[np.array([1])].T).toarray())


@pytest.mark.parametrize("budget", [1, 5, 40, 1 << 22])
def test_shared_groups_split_columns_where_the_running_total_reaches_the_budget(budget):
    rng = np.random.default_rng(budget)
    matrix = sparse.csr_matrix(rng.random((30, 12)) * (rng.random((30, 12)) < 0.4))
    pairwise = ItemModel("U", np.arange(30), matrix + sparse.eye(30, 12)).distance("jaccard")
    rows, columns = np.arange(30), rng.integers(0, 30, 17)
    by_component = pairwise._data[rows].T.tocsr()
    groups = [group for group, _ in pairwise._shared_groups(by_component, pairwise._data, columns, budget)]
    # the rule, column by column: a group takes columns while its triples stay within the budget (at least one)
    cols = pairwise._data[columns]
    cost = [int(np.diff(by_component.indptr)[cols.indices[cols.indptr[j]:cols.indptr[j + 1]]].sum())
            for j in range(len(columns))]
    want, begin = [], 0
    while begin < len(columns):
        end, total = begin, 0
        while end < len(columns) and total + cost[end] <= budget:
            total += cost[end]
            end += 1
        end = max(end, begin + 1)
        want.append(list(range(begin, end)))
        begin = end
    assert [list(group) for group in groups] == want
    assert np.array_equal(pairwise.block(rows, columns), np.column_stack(
        [pairwise.block(rows, columns[j:j + 1]) for j in range(len(columns))]))
