"""PURS, the personalized unexpected recommender system (Li, Que, Jiang, Hu and Tuzhilin 2020), simplified, in PyTorch.

Li et al.: utility = relevance(u, i) + f(unexp(u, i)) x personalised factor(u).  Unexpectedness is the distance of the
item's embedding from the clusters of the user's behaviour embeddings (mean-shift clusters in their TensorFlow code),
f(x) = x exp(-x) rewards moderate unexpectedness, and the personalised factor comes from self-attention over the
behaviour sequence.  Here: relevance = (user vector + attention-pooled context) . q_i + b_i; unexp = the mean
Euclidean distance between q_i and the context items' vectors (each context item its own cluster: no mean shift);
f(x) = x exp(-x); factor = sigmoid(w . self-attention summary); score = relevance + ``alpha`` x f(unexp) x factor,
trained with BPR.  A documented simplification, not the authors' network.
"""

from __future__ import annotations

from .sequential import SequentialTorchRecommender


def _net(n_users: int, n_items: int, dim: int, alpha: float):
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.user = nn.Embedding(n_users, dim)
            self.item = nn.Embedding(n_items + 1, dim, padding_idx=n_items)
            self.bias = nn.Embedding(n_items + 1, 1, padding_idx=n_items)
            self.attention = nn.MultiheadAttention(dim, 1, batch_first=True)
            self.factor = nn.Linear(dim, 1)
            nn.init.normal_(self.user.weight, std=0.05)
            nn.init.normal_(self.item.weight, std=0.05)
            nn.init.zeros_(self.bias.weight)

        def forward(self, users, context, mask, items):
            emb = self.item(context)
            empty = ~mask.any(1)
            key_mask = ~mask
            key_mask[empty, -1] = False  # a user without context attends to one padding slot (zeros)
            attended, _ = self.attention(emb, emb, emb, key_padding_mask=key_mask)
            weights = mask.unsqueeze(-1).float()
            summary = (attended * weights).sum(1) / weights.sum(1).clamp(min=1)
            q = self.item(items)
            relevance = ((self.user(users) + summary).unsqueeze(1) * q).sum(-1) + self.bias(items).squeeze(-1)
            dist = torch.cdist(q, emb)  # (B, C, L)
            unexp = (dist * weights.transpose(1, 2)).sum(-1) / weights.sum(1).clamp(min=1)
            factor = torch.sigmoid(self.factor(summary))
            return relevance + alpha * unexp * torch.exp(-unexp) * factor

    return Net()


class PURS(SequentialTorchRecommender):
    name = "PURS"
    defaults = {**SequentialTorchRecommender.common, "alpha": 0.5}

    def build(self):
        return _net(self.n_users, self.n_items, int(self.params["dim"]), float(self.params["alpha"]))
