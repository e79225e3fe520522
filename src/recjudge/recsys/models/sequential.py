"""The PyTorch training loop shared by UAUM, DESR and PURS (CPU, one thread, seeded).

Training examples are the positions of each user's training sequence: at position t the context is the (up to)
``max_len`` items before t and the target is the item at t, so the item being predicted is never in its own
context.  Loss: BPR (Rendle et al. 2009) against one negative sampled uniformly from the items the user never
liked in training.  Adam, ``epochs`` passes, mini-batches of ``batch_size``.  At recommendation time the context is
the last ``max_len`` training items of the user.  A subclass builds ``self.net`` (a torch module whose
``forward(users, context, mask, items)`` returns scores of shape (batch, n_candidates)).
"""

from __future__ import annotations

import numpy as np

from .base import Recommender, torch_single_thread


class SequentialTorchRecommender(Recommender):
    name = "sequential"
    common = {"dim": 32, "epochs": 5, "lr": 0.005, "weight_decay": 1e-5, "max_len": 20, "batch_size": 256}

    def _context(self, seq: list[int], end: int) -> list[int]:
        length = int(self.params["max_len"])
        return seq[max(0, end - length):end]

    def _padded(self, contexts: list[list[int]]):
        import torch

        length = int(self.params["max_len"])
        pad = self.n_items  # padding index
        array = np.full((len(contexts), length), pad, dtype=np.int64)
        for row, ctx in enumerate(contexts):
            if ctx:
                array[row, length - len(ctx):] = ctx
        tensor = torch.from_numpy(array)
        return tensor, tensor != pad

    def build(self):  # -> torch.nn.Module
        raise NotImplementedError

    def _fit(self) -> None:
        import torch

        torch_single_thread(self.seed)
        rng = np.random.default_rng(self.seed)
        self.net = self.build()
        opt = torch.optim.Adam(self.net.parameters(), lr=float(self.params["lr"]),
                               weight_decay=float(self.params["weight_decay"]))
        examples = np.array([(u, t) for u, seq in enumerate(self.sequences) for t in range(1, len(seq))],
                            dtype=np.int64)
        if len(examples) == 0:
            raise ValueError(f"{self.name}: no user has two training positives")
        liked = self.matrix
        batch = int(self.params["batch_size"])
        self.net.train()
        for _epoch in range(int(self.params["epochs"])):
            order = rng.permutation(len(examples))
            for start in range(0, len(order), batch):
                chunk = examples[order[start:start + batch]]
                users = chunk[:, 0]
                pos = np.array([self.sequences[u][t] for u, t in chunk])
                neg = rng.integers(0, self.n_items, len(chunk))
                for _ in range(3):  # resample negatives that the user liked
                    bad = np.asarray(liked[users, neg]).ravel() > 0
                    if not bad.any():
                        break
                    neg[bad] = rng.integers(0, self.n_items, int(bad.sum()))
                context, mask = self._padded([self._context(self.sequences[u], t) for u, t in chunk])
                items = torch.from_numpy(np.stack([pos, neg], axis=1))
                scores = self.net(torch.from_numpy(users), context, mask, items)
                loss = -torch.nn.functional.logsigmoid(scores[:, 0] - scores[:, 1]).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        self.net.eval()

    def _score(self, users: np.ndarray) -> np.ndarray:
        import torch

        out = np.empty((len(users), self.n_items))
        all_items = torch.arange(self.n_items)
        with torch.no_grad():
            for start in range(0, len(users), 32):
                part = users[start:start + 32]
                context, mask = self._padded([self._context(self.sequences[u], len(self.sequences[u])) for u in part])
                items = all_items.expand(len(part), -1)
                out[start:start + len(part)] = self.net(torch.from_numpy(part), context, mask, items).numpy()
        return out
