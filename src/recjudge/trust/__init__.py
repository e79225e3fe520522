"""What an LLM judge is worth: how far its scores can be trusted, and how many human labels they save.

- ``calibration``  maps from a judge's score to the human 1–5 scale, fitted out of fold by user (isotonic, ordinal)
- ``ppi``          prediction-powered inference (PPI++ through ``ppi-python``): intervals from a few human labels plus
  many judge scores (with the finite-population correction when the labels are a large share of the answers),
  coverage over repeated draws with its Monte Carlo interval, and the human labels a judge is worth
- ``audits``       reliability across prompts and models (Krippendorff's α) and bias: what a judge's score follows
  besides the human rating (popularity, release year, title length, history length)
- ``population``   every covered answer with its human rating, the properties a judge might follow, and every
  judge's score
- ``papers_worth`` the papers' own LLM judges priced in labels by the ρ² rule, from their printed correlations and
  the papers' n, with the correlation that n detects (80% power) and the n each correlation needs
- ``judges``       the judges of this part at full coverage of Serendipity-2018, and the answers they cover
- ``judge_table``  every judge the book knows on one scale (Pearson with its interval, labels saved, ranking AUC,
  calibrated MAE beside a constant's): the book's headline table and figure

This package sits beside the paper packages: it reads the engine, the data and ``metaeval``, and no paper's package
imports it.
"""
