"""Each chapter's page, one module per chapter, named as its notebook (``notebooks/<chapter>.md``).

A chapter's notebook shows the few calls that carry its analysis (load the study, ask the judges, compute the
agreement) and keeps its prose; what only dresses the page lives here: the opening box's facts, the tables with their
captions and formats, the figures, and the glued findings with the rules that choose their words. This layer sits
above the paper packages, whose analysis it presents.

- ``data_tour``: which datasets a build holds, their sizes and distributions
- ``proxy_vs_llm``: proxy metrics against LLM judges of serendipity (Kang et al. 2025, RQ1)
- ``auxiliary_data``: auxiliary data in the judge's prompt (Kang et al. 2025, RQ2)
- ``llm_ensembles``: ensembles of judges (Kang et al. 2025, RQ3)
- ``prompt_strategies``: prompt strategies for a serendipity judge (Tokutake et al. 2025)
- ``recommender_reevaluation``: recommenders re-evaluated by an LLM judge (Tokutake et al. 2025, Table 3)
- ``explanation_evaluators``: LLMs as evaluators of recommendation explanations (Zhang et al. 2024)
- ``normalised_surprise``: limits to surprise (Lima & Peres)
- ``metamorphic_recommender``: metamorphic testing of an LLM recommender (Khirbat et al. 2024)
- ``judge_robustness``: the metamorphic robustness of the book's LLM judges
- ``trust_judges``: what a judge is worth: calibration, prediction-powered inference, reliability, bias
- ``planted_judges``: would the book recognise a capable judge? The claims' rule read by planted judges

Beside them, ``reply_readings``: what every reply reader reads from every stored reply, the chapters that use each
reader, and how many scored replies a change of the parsing rules moved.
"""
