"""KFN, k-furthest neighbours (Said, Fields, Jain and Albayrak 2013).

Said et al. find, for each user, the k users *least* similar to them (the furthest neighbours) and recommend what
those users would dislike, by inverting the neighbours' ratings.  Under this protocol only positives are kept
(ratings < 4 are discarded), so no dislike is observable.  What is implementable, and what we implement: cosine
similarity between users' training vectors; the k users with the lowest similarity (ties broken by the user
index) are the furthest neighbours, weighted by dissimilarity (1 - similarity); an item's score is the weighted
number of furthest neighbours who liked it.  This recommends what is liked by people unlike the user: diverse
and deliberately inaccurate, as in Tokutake et al.'s Table 3.  ``KFN`` is that baseline alone (``pop_weight`` 0);
``KFNPopularity`` ("KFN + popularity") adds ``pop_weight`` x the item's normalised popularity, a labelled variant
that is not the paper's baseline and is tuned with the blend weight as a second parameter.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import cosine_similarity

from .base import Recommender


class KFN(Recommender):
    name = "KFN"
    defaults = {"k": 50, "pop_weight": 0.0}

    def _fit(self) -> None:
        self._user_sim = cosine_similarity(self.matrix, dense_output=True)
        pop = np.asarray(self.matrix.sum(axis=0)).ravel()
        self._pop = pop / max(pop.max(), 1.0)

    def _score(self, users: np.ndarray) -> np.ndarray:
        k = min(int(self.params["k"]), self.n_users - 1)
        sim = self._user_sim[users].copy()
        sim[np.arange(len(users)), users] = np.inf  # never one's own furthest neighbour
        far = np.argsort(sim, axis=1, kind="stable")[:, :k]
        weights = np.zeros_like(sim)
        np.put_along_axis(weights, far, 1.0 - np.take_along_axis(self._user_sim[users], far, axis=1), axis=1)
        scores = np.asarray(self.matrix.T.dot(weights.T)).T
        return scores / max(k, 1) + float(self.params["pop_weight"]) * self._pop


class KFNPopularity(KFN):
    name = "KFN + popularity"
    defaults = {"k": 50, "pop_weight": 0.1}
