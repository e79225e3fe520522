"""SASRec (Kang and McAuley 2018) through Cornac's ``SASRec`` (PyTorch, CPU, seeded, one thread).

Each user's training positives, oldest first, form one sequence (Cornac's SequentialDataset with one session per
user); at recommendation time the model reads the last ``max_len`` training items of the user."""

from __future__ import annotations

import numpy as np

from .base import Recommender, torch_single_thread


class SASRec(Recommender):
    name = "SASRec"
    defaults = {"embedding_dim": 32, "n_epochs": 3, "learning_rate": 0.001, "max_len": 50, "num_blocks": 1,
                "dropout": 0.2, "l2_reg": 0.0}

    def _fit(self) -> None:
        import cornac

        torch_single_thread(self.seed)
        rows = [(str(u), str(u), str(i), t) for u, seq in enumerate(self.sequences) for t, i in enumerate(seq)]
        data = cornac.data.SequentialDataset.build(rows, fmt="USIT", seed=self.seed)
        self._model = cornac.models.SASRec(
            embedding_dim=int(self.params["embedding_dim"]), n_epochs=int(self.params["n_epochs"]),
            learning_rate=float(self.params["learning_rate"]), max_len=int(self.params["max_len"]),
            num_blocks=int(self.params["num_blocks"]), dropout=float(self.params["dropout"]),
            l2_reg=float(self.params["l2_reg"]), batch_size=128, n_sample=0, device="cpu", seed=self.seed,
            verbose=False)
        self._model.fit(data)
        self._data = data
        self._items = np.array([data.iid_map[str(i)] for i in range(self.n_items)])
        self._users = np.array([data.uid_map[str(u)] for u in range(self.n_users)])

    def _score(self, users: np.ndarray) -> np.ndarray:
        import torch

        out = np.empty((len(users), self.n_items))
        with torch.no_grad():
            for row, u in enumerate(users):
                history = [int(self._items[i]) for i in self.sequences[u]]
                scores = np.asarray(self._model.score(int(self._users[u]), history)).ravel()
                out[row] = scores[self._items]
        return out
