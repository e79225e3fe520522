"""Popularity: the number of training positives of each item, the same list for everybody (a reference point)."""

from __future__ import annotations

import numpy as np

from .base import Recommender


class Popularity(Recommender):
    name = "Popularity"
    defaults: dict = {}

    def _fit(self) -> None:
        self._counts = np.asarray(self.matrix.sum(axis=0)).ravel()

    def _score(self, users: np.ndarray) -> np.ndarray:
        return np.tile(self._counts, (len(users), 1))
