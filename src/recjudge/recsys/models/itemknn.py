"""Item-kNN: cosine similarity between item columns of the training matrix (scikit-learn), each item keeping its
``k`` most similar neighbours; a user's score for an item is the sum of its similarities to the user's items."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import cosine_similarity

from .base import Recommender


def top_k_rows(similarity: np.ndarray, k: int) -> np.ndarray:
    """Keep the k largest entries of each row (the rest set to 0)."""
    if k >= similarity.shape[1]:
        return similarity
    keep = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
    out = np.zeros_like(similarity)
    np.put_along_axis(out, keep, np.take_along_axis(similarity, keep, axis=1), axis=1)
    return out


class ItemKNN(Recommender):
    name = "ItemKNN"
    defaults = {"k": 100}

    def _fit(self) -> None:
        sim = cosine_similarity(self.matrix.T.tocsr(), dense_output=True)
        np.fill_diagonal(sim, 0.0)
        # neighbours of item j are kept per column: score(u, i) = sum_j x_uj * sim(j, i) over the k nearest j of i
        self._sim = sp.csr_matrix(top_k_rows(sim, int(self.params["k"])).T)

    def _score(self, users: np.ndarray) -> np.ndarray:
        return np.asarray((self.matrix[users] @ self._sim).todense())
