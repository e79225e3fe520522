"""BLEU and ROUGE on Chinese text against hand-computed values."""

import math

import numpy as np
import pytest

from recjudge.explanations.text_metrics import (
    bleu_scores,
    chinese_characters,
    chinese_words,
    reference_metric_scores,
    rouge_f_scores,
    sentence_bleu,
)


def test_bleu1_is_brevity_penalty_times_unigram_precision():
    # hypothesis 5 characters, all in the 7-character reference: p1 = 1, BP = exp(1 - 7/5)
    assert sentence_bleu("我喜欢电影", "我喜欢这部电影", 1) == pytest.approx(math.exp(1 - 7 / 5), abs=1e-9)


def test_bleu4_hand_computed():
    # 我喜欢看电影 vs 我喜欢看书: p1 = 4/6, p2 = 3/5, p3 = 2/4, p4 = 1/3, hypothesis longer -> BP = 1
    expected = (4 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert sentence_bleu("我喜欢看电影", "我喜欢看书", 4) == pytest.approx(expected, abs=1e-9)
    assert sentence_bleu("我喜欢看电影", "我喜欢看书", 4, tokenize="char") == pytest.approx(expected, abs=1e-9)


def test_bleu_identical_text_is_one_and_disjoint_is_zero():
    assert sentence_bleu("今天天气很好", "今天天气很好", 4) == pytest.approx(1.0)
    assert sentence_bleu("甲乙丙丁", "戊己庚辛", 4) == 0.0


def test_bleu_zh_tokenizer_keeps_latin_words_whole():
    # "Piper" is one token for the zh tokenizer: hypothesis 鹬, Piper (2 tokens, both matched), reference 5 tokens
    assert sentence_bleu("鹬 Piper", "我想看鹬 Piper", 1) == pytest.approx(math.exp(1 - 5 / 2))


def test_bleu_pretokenised_words():
    # words: hypothesis 我/喜欢/电影 (3), reference 我/喜欢/这部/电影 (4): p1 = 1, BP = exp(1 - 4/3)
    assert sentence_bleu("我 喜欢 电影", "我 喜欢 这部 电影", 1, tokenize="none") == pytest.approx(math.exp(-1 / 3))


def test_bleu_scores_missing_reference_is_nan_and_lengths_checked():
    values = bleu_scores(["我喜欢电影", "好"], ["我喜欢这部电影", None], 1)
    assert values[0] == pytest.approx(math.exp(-0.4)) and np.isnan(values[1])
    with pytest.raises(ValueError, match="aligned"):
        bleu_scores(["a"], [], 1)
    with pytest.raises(ValueError, match="tokenisation"):
        sentence_bleu("a", "a", tokenize="klingon")


def test_rouge_character_tokenizer_hand_computed():
    # P = 5/5, R = 5/7 -> F = 2PR/(P+R) = 5/6; the LCS is the whole hypothesis, so ROUGE-L = ROUGE-1 here
    table = rouge_f_scores(["我喜欢电影"], ["我喜欢这部电影"], tokenizer="char")
    assert table.loc[0, "rouge1"] == pytest.approx(5 / 6)
    assert table.loc[0, "rougeL"] == pytest.approx(5 / 6)


def test_rouge_l_differs_from_rouge_1_when_order_differs():
    # unigrams all shared (F1 = 1) but the longest common subsequence of 电影我喜欢 / 我喜欢电影 has 3 tokens
    table = rouge_f_scores(["电影我喜欢"], ["我喜欢电影"], tokenizer="char")
    assert table.loc[0, "rouge1"] == pytest.approx(1.0)
    assert table.loc[0, "rougeL"] == pytest.approx(3 / 5)


def test_rouge_custom_tokenizer_callable():
    table = rouge_f_scores(["a b"], ["a c"], tokenizer=str.split)
    assert table.loc[0, "rouge1"] == pytest.approx(0.5)


def test_default_rouge_tokenizer_does_not_erase_chinese():
    # rouge-score's own tokenizer keeps only [a-z0-9] and would give 0 here
    table = rouge_f_scores(["我喜欢电影"], ["我喜欢这部电影"])
    assert table.loc[0, "rouge1"] > 0.5


def test_tokenisers():
    assert chinese_characters("我 爱") == ["我", "爱"]
    words = chinese_words("我喜欢看电影")
    assert "".join(words) == "我喜欢看电影" and len(words) < 6


def test_reference_metric_scores_columns():
    table = reference_metric_scores(["我喜欢看电影"], ["我喜欢看书"])
    assert list(table.columns) == ["bleu_1", "bleu_4", "rouge_1_f", "rouge_l_f"]
    assert table.loc[0, "bleu_1"] == pytest.approx(4 / 6)  # zh tokens; BP = 1
