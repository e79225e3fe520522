"""Meta-evaluation: how well an evaluator's scores agree with human judgments. Shared by every chapter.

- ``agreement``  Likert rescaling (Kang et al. eq. 6), Pearson/MAE/RMSE, bootstrap intervals, Williams' test for
  dependent correlations, multi-level (dataset/user/pair) correlation
- ``ensembles``  score averaging over every subset of any evaluators, judged by any agreement function (Kang et al.
  RQ3, Zhang et al. RQ3); mean/best/worst by ensemble size; held-out selection of the best cell
- ``baselines``  the trivial baselines every judge is scored beside: a constant answer (the most frequent level, the
  mean; chosen on the other users' answers) and Random (its exact expectation), with MAE, RMSE and accuracy
- ``papers_vs_baselines``  the papers' error tables beside those baselines, from the distributions they print
- ``paper_judges``  every judge whose agreement with users a paper prints, with its interval at the paper's n and
  which correlation it is (pooled, per-user mean, mean of aspects)
- ``dependent``  comparisons on the same answers read from printed numbers: the interval of a difference or ratio
  of two correlations with one truth, and of two paired means whose answers are not printed
- ``power``  the smallest effect a sample detects with 80% power and the sample an effect needs (Fisher z for
  correlations, statsmodels' ``TTestPower`` for paired differences)

This layer imports no paper's package.
"""
