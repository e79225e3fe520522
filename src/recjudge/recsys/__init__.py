"""Re-evaluating recommenders with an LLM judge (Tokutake et al. 2025, section 5, Table 3).

Modules: ``split`` (positives and the global temporal split into folds), ``models/`` (the recommenders, one per
module, with a common fit/recommend interface), ``tuning`` (Optuna TPE on Recall_acc@10 of the validation chunk),
``lists`` (training every recommender on every fold; the committed lists), ``metrics`` (Precision/Recall/NDCG at k
for accuracy and serendipity, Avg. score), ``judging`` (judge requests from lists, items and histories; scores;
Table-3 metrics; cost), ``judge_cli`` (``recjudge judge``).
"""
