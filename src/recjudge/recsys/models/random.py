"""Random: uniform scores, seeded (the floor every recommender must beat)."""

from __future__ import annotations

import numpy as np

from .base import Recommender


class RandomRecommender(Recommender):
    name = "Random"
    defaults: dict = {}

    def _fit(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def _score(self, users: np.ndarray) -> np.ndarray:
        return self._rng.random((len(users), self.n_items))
