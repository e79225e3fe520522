"""Each chapter's page, one module per chapter, named as its notebook (``notebooks/<chapter>.md``).

A chapter's notebook shows the few calls that carry its analysis (load the study, ask the judges, compute the
agreement) and keeps its prose; what only dresses the page lives here: the opening box's facts, the tables with their
captions and formats, the figures, and the glued findings with the rules that choose their words. This layer sits
above the paper packages, whose analysis it presents.

- ``auxiliary_data``          auxiliary data in the judge's prompt (Kang et al. 2025, RQ2), and its synthetic run
- ``data_tour``: which datasets a build holds, their sizes and distributions.
- ``explanation_evaluators``  LLMs as evaluators of recommendation explanations (Zhang et al. 2024)
- ``judge_robustness``: the metamorphic robustness of the book's LLM judges.
- ``prompt_strategies``: Tokutake et al.'s four prompt strategies, and their synthetic run
- ``proxy_vs_llm``, ``llm_ensembles``: Kang et al.'s proxies against LLM judges, and ensembles of judges.
- ``recommender_reevaluation``: Tokutake et al.'s Table 3, recommenders judged by an LLM
- ``trust_judges``: what is a judge worth? (and its synthetic run)
Pages here: ``normalised_surprise``, ``metamorphic_recommender``.
"""
