"""recjudge: large language models as judges of recommender systems beyond accuracy.

A thin package behind a Jupyter Book of parameterised notebooks. Sub-packages and modules, one per concept:

- ``recjudge.data``      dataset registry, fetching (mirror folder or official URL) and tidy loaders
- ``recjudge.llm``       the LLM judge engine: providers, response store, runner, reply parsing
- ``recjudge.prompts``   prompt templates and the builders that fill them
- ``recjudge.metaeval``  Likert rescaling, agreement statistics, multi-level correlations, bootstrap intervals
- ``recjudge.serendipity`` serendipity ground truth, user histories and samples (Kang et al. 2025)
- ``recjudge.proxies``   serendipity proxy metrics SOG, SNPR, PURS, DESR
- ``recjudge.explanations``, ``recjudge.text_metrics``, ``recjudge.ensembles``  explanation evaluators (Zhang 2024)
- ``recjudge.surprise``, ``recjudge.distances``  potential-surprise limits and normalised surprise (Lima & Peres)
- ``recjudge.time_frames``, ``recjudge.item_models``, ``recjudge.recommenders``, ``recjudge.one_plus_random``
  the experiments of Lima & Peres
"""

__version__ = "0.1.0"
