"""UAUM, the unexpectedness-augmented utility model (Zheng, Chan and Ip 2015), in PyTorch.

Zheng et al. add an unexpectedness term to an SVD-style latent factor model: the utility of item i for user u is the
predicted preference plus a weight times how far i lies from what u has consumed.  Here: preference
p_u . q_i + b_i; unexpectedness 1 - cos(q_i, mean of the context's item vectors); utility = preference +
``beta`` x unexpectedness, trained end to end with BPR (``sequential``).  Zheng et al. fit explicit ratings with
squared error; with positives only we use BPR, and the context is the user's recent items rather than the whole
profile (the trainer never puts the target in its own context).  ``beta`` is a hyper-parameter (Optuna may tune it).
"""

from __future__ import annotations

from .sequential import SequentialTorchRecommender


def _net(n_users: int, n_items: int, dim: int, beta: float):
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.user = nn.Embedding(n_users, dim)
            self.item = nn.Embedding(n_items + 1, dim, padding_idx=n_items)
            self.bias = nn.Embedding(n_items + 1, 1, padding_idx=n_items)
            nn.init.normal_(self.user.weight, std=0.05)
            nn.init.normal_(self.item.weight, std=0.05)
            nn.init.zeros_(self.bias.weight)

        def forward(self, users, context, mask, items):
            q = self.item(items)  # (B, C, d)
            pref = (self.user(users).unsqueeze(1) * q).sum(-1) + self.bias(items).squeeze(-1)
            ctx = (self.item(context) * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
            cos = torch.nn.functional.cosine_similarity(q, ctx.unsqueeze(1).expand_as(q), dim=-1)
            return pref + beta * (1.0 - cos)

    return Net()


class UAUM(SequentialTorchRecommender):
    name = "UAUM"
    defaults = {**SequentialTorchRecommender.common, "beta": 0.1}

    def build(self):
        return _net(self.n_users, self.n_items, int(self.params["dim"]), float(self.params["beta"]))
