"""Recommenders with one interface (``base.Recommender``: ``fit(train)``, ``recommend(users, k)``), one per module.

Modules: ``base`` (the interface, id mapping, masking of seen items, top-k), ``random`` (uniform, the floor),
``popularity`` and ``itemknn`` (reference points), ``bpr`` (BPRMF via Cornac), ``sasrec`` (SASRec via Cornac),
``kfn`` (k-furthest neighbours, and the variant blended with popularity), ``sequential`` (the PyTorch BPR trainer
shared by the next three), ``uaum``, ``desr`` and ``purs`` (serendipity-oriented models from their papers,
simplifications documented in each).
"""

from __future__ import annotations

from .base import Recommender
from .bpr import BPRMF
from .desr import DESR
from .itemknn import ItemKNN
from .kfn import KFN, KFNPopularity
from .popularity import Popularity
from .purs import PURS
from .random import RandomRecommender
from .sasrec import SASRec
from .uaum import UAUM

#: Table-3 order, then the reference points and the labelled variant
RECOMMENDERS: dict[str, type[Recommender]] = {cls.name: cls for cls in (
    BPRMF, SASRec, KFN, UAUM, DESR, PURS, Popularity, ItemKNN, RandomRecommender, KFNPopularity)}


def in_order(names, order) -> list[str]:
    """The distinct ``names`` in ``order`` (e.g. ``RECOMMENDERS``' Table-3 order), then any other, sorted: the row
    order of the chapter's tables."""
    present = set(names)
    return [n for n in order if n in present] + sorted(present - set(order))


def make(name: str, seed: int = 0, **params) -> Recommender:
    try:
        cls = RECOMMENDERS[name]
    except KeyError:
        raise ValueError(f"unknown recommender {name!r}; known: {sorted(RECOMMENDERS)}") from None
    return cls(seed=seed, **params)


__all__ = ["RECOMMENDERS", "Recommender", "in_order", "make", *[c.__name__ for c in RECOMMENDERS.values()]]
