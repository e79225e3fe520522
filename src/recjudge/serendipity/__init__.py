"""Serendipity judges (Kang et al. 2025; Tokutake et al. 2025).

- ``ground_truth``  serendipity ground truth of Serendipity-2018 and Taobao, user histories, samples, agreement tables
- ``proxies``       the proxy metrics SOG, SNPR, PURS, DESR and a random baseline
- ``auxiliary_data`` auxiliary data in the judge's prompt (RQ2): popularity, similarity, ratings, profiles,
  history length
- ``personality``   Taobao CEI-II curiosity and TIPI Big-Five scoring; ordinal and linear regressions of serendipity
- ``prompt_strategies`` Tokutake et al.: ground-truth search, the Base/LS/CoT/LtM judges (LtM chains), MAE and
  three-class accuracy, ``DEFAULT_STRATEGY``
- ``claims``        the papers' own claims checked with their own numbers (Kang's significance and "about 100% over
  SOG"; Tokutake's Avg. score against the printed g distribution)

Prompts for these judges live in ``recjudge.prompts.serendipity``.
"""
