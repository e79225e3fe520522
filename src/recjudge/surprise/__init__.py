"""Limits to surprise (Lima & Peres).

- ``limits``           potential surprise (exact: brute force and subset DP; greedy), normalised surprise
- ``distances``        item distances: Euclidean, cosine, Jensen-Shannon, weighted Jaccard, Aitchison, NPMI
- ``item_models``      item representations C (content), P (Doc2Vec), U (ratings), N (NPMI)
- ``time_frames``      time frames and eligible intervals of a rating log
- ``recommenders``     the paper's item-kNN, MSI and LSI
- ``one_plus_random``  the one-plus-random protocol of experiment 2
- ``paper_tables``     the paper's Table 2 as printed (package data ``lima_peres_table2.csv``)
"""
