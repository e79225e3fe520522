"""Reference-based text metrics (BLEU, ROUGE) for Chinese explanation texts.

Zhang et al. (2024) score each explanation against the user's own self-explanation of the same movie with BLEU-1,
BLEU-4, ROUGE-1-F and ROUGE-L-F, without saying how they tokenised the Chinese text or smoothed BLEU. This module
uses the field's packages and makes both choices explicit parameters:

- **BLEU**: ``sacrebleu`` sentence-level BLEU (``BLEU(...).sentence_score``) with ``effective_order=True``. BLEU-n
  is the cumulative score up to order n (BLEU-1 = brevity penalty × unigram precision). Default tokenisation
  ``"zh"`` (sacrebleu's Chinese tokenizer: one token per CJK character, Latin words and numbers kept whole) and
  default smoothing ``"none"`` — of the variants tried on the study data (``zh``/jieba words/characters ×
  exp/floor/add-k/none smoothing) these are closest to the paper's Table 1 (see the notebook).
- **ROUGE**: ``rouge-score``'s ``RougeScorer`` (F-measure of ROUGE-1 and ROUGE-L, no stemming), whose built-in
  tokenizer keeps only ASCII letters and digits and so erases Chinese text; it is given a Chinese tokenizer instead,
  by default ``jieba`` word segmentation (``"char"`` gives one token per non-space character).

Scores are returned on 0–1 (sacrebleu's 0–100 divided by 100).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "DEFAULT_BLEU_SMOOTHING",
    "DEFAULT_BLEU_TOKENIZE",
    "DEFAULT_ROUGE_TOKENIZER",
    "bleu_scores",
    "chinese_characters",
    "chinese_words",
    "reference_metric_scores",
    "rouge_f_scores",
    "sentence_bleu",
]

BleuTokenize = Literal["zh", "jieba", "char", "none"]
RougeTokenizer = Literal["jieba", "char"] | Callable[[str], list[str]]

DEFAULT_BLEU_TOKENIZE: BleuTokenize = "zh"
DEFAULT_BLEU_SMOOTHING = "none"
DEFAULT_ROUGE_TOKENIZER = "jieba"


# --------------------------------------------------------------------------------------------------------------------
# Tokenisers
# --------------------------------------------------------------------------------------------------------------------
def chinese_words(text: str) -> list[str]:
    """jieba word segmentation (default dictionary, accurate mode) without whitespace tokens."""
    return [token for token in _jieba().lcut(text) if token.strip()]


def chinese_characters(text: str) -> list[str]:
    """One token per character, whitespace dropped."""
    return [char for char in text if not char.isspace()]


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)  # silence the dictionary-loading banner
    jieba.initialize()
    return jieba


# --------------------------------------------------------------------------------------------------------------------
# BLEU
# --------------------------------------------------------------------------------------------------------------------
@lru_cache(maxsize=32)
def _bleu(max_order: int, tokenize: str, smooth_method: str):
    from sacrebleu.metrics import BLEU

    return BLEU(tokenize=tokenize, max_ngram_order=max_order, smooth_method=smooth_method, effective_order=True)


def _pretokenize(text: str, tokenize: BleuTokenize) -> tuple[str, str]:
    """(text for sacrebleu, sacrebleu tokenizer name): jieba/char segment here and let sacrebleu split on spaces."""
    if tokenize == "jieba":
        return " ".join(chinese_words(text)), "none"
    if tokenize == "char":
        return " ".join(chinese_characters(text)), "none"
    if tokenize in ("zh", "none"):
        return text, tokenize
    raise ValueError(f"unknown BLEU tokenisation {tokenize!r}; expected 'zh', 'jieba', 'char' or 'none'")


def sentence_bleu(
    hypothesis: str,
    reference: str,
    max_order: int = 4,
    *,
    tokenize: BleuTokenize = DEFAULT_BLEU_TOKENIZE,
    smooth_method: str = DEFAULT_BLEU_SMOOTHING,
) -> float:
    """Sentence-level cumulative BLEU-``max_order`` of ``hypothesis`` against one ``reference``, on 0–1.

    smooth_method: sacrebleu's ``"none"``, ``"floor"``, ``"add-k"`` or ``"exp"``.
    """
    if max_order < 1:
        raise ValueError(f"max_order must be >= 1, got {max_order}")
    hyp, name = _pretokenize(str(hypothesis), tokenize)
    ref, _ = _pretokenize(str(reference), tokenize)
    return _bleu(max_order, name, smooth_method).sentence_score(hyp, [ref]).score / 100.0


def bleu_scores(
    hypotheses: Sequence[str],
    references: Sequence[str],
    max_order: int = 4,
    *,
    tokenize: BleuTokenize = DEFAULT_BLEU_TOKENIZE,
    smooth_method: str = DEFAULT_BLEU_SMOOTHING,
) -> np.ndarray:
    """:func:`sentence_bleu` for aligned lists; NaN where the reference is missing."""
    _check_aligned(hypotheses, references)
    return np.array(
        [
            np.nan if _missing(ref) else sentence_bleu(hyp, ref, max_order, tokenize=tokenize,
                                                        smooth_method=smooth_method)
            for hyp, ref in zip(hypotheses, references)
        ],
        dtype=float,
    )


# --------------------------------------------------------------------------------------------------------------------
# ROUGE
# --------------------------------------------------------------------------------------------------------------------
class _CallableTokenizer:
    """Adapter: rouge-score wants an object with ``tokenize(text) -> list[str]``."""

    def __init__(self, function: Callable[[str], list[str]]):
        self.function = function

    def tokenize(self, text: str) -> list[str]:
        return list(self.function(text))


def _rouge_tokenizer(tokenizer: RougeTokenizer) -> _CallableTokenizer:
    if tokenizer == "jieba":
        return _CallableTokenizer(chinese_words)
    if tokenizer == "char":
        return _CallableTokenizer(chinese_characters)
    if callable(tokenizer):
        return _CallableTokenizer(tokenizer)
    raise ValueError(f"unknown ROUGE tokenizer {tokenizer!r}; expected 'jieba', 'char' or a callable")


def rouge_f_scores(
    hypotheses: Sequence[str],
    references: Sequence[str],
    kinds: Sequence[str] = ("rouge1", "rougeL"),
    *,
    tokenizer: RougeTokenizer = DEFAULT_ROUGE_TOKENIZER,
) -> pd.DataFrame:
    """ROUGE F-measures (one column per kind, e.g. ``rouge1``, ``rougeL``) for aligned lists; NaN rows where the
    reference is missing."""
    from rouge_score import rouge_scorer

    _check_aligned(hypotheses, references)
    scorer = rouge_scorer.RougeScorer(list(kinds), use_stemmer=False, tokenizer=_rouge_tokenizer(tokenizer))
    rows = []
    for hyp, ref in zip(hypotheses, references):
        if _missing(ref):
            rows.append({kind: np.nan for kind in kinds})
            continue
        scores = scorer.score(str(ref), str(hyp))  # rouge-score's order: (target, prediction)
        rows.append({kind: scores[kind].fmeasure for kind in kinds})
    return pd.DataFrame(rows, columns=list(kinds), dtype=float)


# --------------------------------------------------------------------------------------------------------------------
# The four reference-based rows of Zhang et al.'s Table 1
# --------------------------------------------------------------------------------------------------------------------
def reference_metric_scores(
    hypotheses: Sequence[str],
    references: Sequence[str],
    *,
    bleu_tokenize: BleuTokenize = DEFAULT_BLEU_TOKENIZE,
    bleu_smoothing: str = DEFAULT_BLEU_SMOOTHING,
    rouge_tokenizer: RougeTokenizer = DEFAULT_ROUGE_TOKENIZER,
) -> pd.DataFrame:
    """Columns ``bleu_1``, ``bleu_4``, ``rouge_1_f``, ``rouge_l_f`` (0–1), one row per hypothesis."""
    rouge = rouge_f_scores(hypotheses, references, ("rouge1", "rougeL"), tokenizer=rouge_tokenizer)
    return pd.DataFrame({
        "bleu_1": bleu_scores(hypotheses, references, 1, tokenize=bleu_tokenize, smooth_method=bleu_smoothing),
        "bleu_4": bleu_scores(hypotheses, references, 4, tokenize=bleu_tokenize, smooth_method=bleu_smoothing),
        "rouge_1_f": rouge["rouge1"].to_numpy(),
        "rouge_l_f": rouge["rougeL"].to_numpy(),
    })


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA or str(value) == ""


def _check_aligned(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"hypotheses and references must be aligned: {len(hypotheses)} vs {len(references)}")
