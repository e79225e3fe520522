"""DESR, directional and explainable serendipity recommendation (Li, Jiang, Chen, Wu, Wang and Li 2020), simplified,
in PyTorch.

Li et al. infer a user's long-term preference and short-term demand (capsule networks over the behaviour
sequence) and recommend items that fit the long-term preference while deviating from the short-term demand in a
"direction" the user is likely to follow.  Here: long-term preference = user vector + mean of the context's item
vectors; short-term demand = a GRU over the last ``short_len`` context items; relevance = long . q_i + b_i;
deviation = 1 - cos(short, q_i); direction weight = sigmoid(w . (long - short)) per user; score = relevance +
``gamma`` x direction weight x deviation, trained with BPR.  No capsules and no explanation module: a documented
simplification, not the authors' network.
"""

from __future__ import annotations

from .sequential import SequentialTorchRecommender


def _net(n_users: int, n_items: int, dim: int, gamma: float, short_len: int):
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.user = nn.Embedding(n_users, dim)
            self.item = nn.Embedding(n_items + 1, dim, padding_idx=n_items)
            self.bias = nn.Embedding(n_items + 1, 1, padding_idx=n_items)
            self.gru = nn.GRU(dim, dim, batch_first=True)
            self.direction = nn.Linear(dim, 1)
            nn.init.normal_(self.user.weight, std=0.05)
            nn.init.normal_(self.item.weight, std=0.05)
            nn.init.zeros_(self.bias.weight)

        def forward(self, users, context, mask, items):
            emb = self.item(context) * mask.unsqueeze(-1)
            long = self.user(users) + emb.sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
            _, hidden = self.gru(emb[:, -short_len:])
            short = hidden[-1]
            q = self.item(items)
            relevance = (long.unsqueeze(1) * q).sum(-1) + self.bias(items).squeeze(-1)
            deviation = 1.0 - torch.nn.functional.cosine_similarity(q, short.unsqueeze(1).expand_as(q), dim=-1)
            weight = torch.sigmoid(self.direction(long - short))
            return relevance + gamma * weight * deviation

    return Net()


class DESR(SequentialTorchRecommender):
    name = "DESR"
    defaults = {**SequentialTorchRecommender.common, "gamma": 0.1, "short_len": 5}

    def build(self):
        return _net(self.n_users, self.n_items, int(self.params["dim"]), float(self.params["gamma"]),
                    int(self.params["short_len"]))
