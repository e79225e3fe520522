"""Meta-evaluation: how well an evaluator's scores agree with human judgments. Shared by every chapter.

- ``agreement``  Likert rescaling (Kang et al. eq. 6), Pearson/MAE/RMSE, bootstrap intervals, Williams' test for
  dependent correlations, multi-level (dataset/user/pair) correlation
- ``ensembles``  score averaging over every subset of any evaluators, judged by any agreement function (Kang et al.
  RQ3, Zhang et al. RQ3); mean/best/worst by ensemble size; held-out selection of the best cell

This layer imports no paper's package.
"""
