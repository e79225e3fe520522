"""BPRMF (Rendle et al. 2009) through Cornac's ``BPR`` (Cython SGD, seeded, one thread)."""

from __future__ import annotations

import numpy as np

from .base import Recommender


class BPRMF(Recommender):
    name = "BPRMF"
    defaults = {"k": 64, "max_iter": 100, "learning_rate": 0.01, "lambda_reg": 0.01}

    def _fit(self) -> None:
        import cornac

        coo = self.matrix.tocoo()
        triples = [(str(u), str(i), 1.0) for u, i in zip(coo.row, coo.col)]
        data = cornac.data.Dataset.from_uir(triples, seed=self.seed)
        self._model = cornac.models.BPR(k=int(self.params["k"]), max_iter=int(self.params["max_iter"]),
                                        learning_rate=float(self.params["learning_rate"]),
                                        lambda_reg=float(self.params["lambda_reg"]), num_threads=1,
                                        seed=self.seed, verbose=False)
        self._model.fit(data)
        # cornac's own indices -> ours
        self._users = np.array([data.uid_map[str(u)] for u in range(self.n_users)])
        self._items = np.array([data.iid_map[str(i)] for i in range(self.n_items)])

    def _score(self, users: np.ndarray) -> np.ndarray:
        u = self._model.u_factors[self._users[users]]
        v = self._model.i_factors[self._items]
        bias = self._model.i_biases[self._items] if self._model.i_biases is not None else 0.0
        return u @ v.T + bias
