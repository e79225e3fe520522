"""Metamorphic testing of an LLM recommender (Khirbat et al. 2024) and of the compendium's own LLM judges.

Modules: ``relations`` (MR1 rating multiplication, MR2 rating shifting, MR3 spaces, MR4 random words, history
shuffling, paraphrase; functions from prompt text to prompt text), ``rank`` (Kendall's tau for lists that share
only some items, overlap ratio, rank-biased overlap with uneven lengths and ties), ``recommender`` (the liked-items
history, reply parsing, the RapidFuzz title matcher), ``study`` (the request plan and Tables 2-4), ``judges``
(metamorphic robustness of the judges: perturbed judge requests and the change in their scores).
"""

from .rank import (
                   RBO,
                   kendall_tau_shared,
                   kendall_tau_union,
                   overlap_ratio,
                   rank_biased_overlap,
                   rbo_weight,
                   similarity_row,
)
from .relations import apply_to_span, mr1_multiply, mr2_shift, mr3_spaces, mr4_random_words, paraphrase, shuffle_list

__all__ = ["RBO", "apply_to_span", "kendall_tau_shared", "kendall_tau_union", "mr1_multiply", "mr2_shift",
           "mr3_spaces", "mr4_random_words", "overlap_ratio", "paraphrase", "rank_biased_overlap", "rbo_weight",
           "shuffle_list", "similarity_row"]
