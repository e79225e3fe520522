"""recjudge: large language models as judges of recommender systems beyond accuracy.

A thin package behind a Jupyter Book of parameterised notebooks; one folder per concept, so that a chapter's code is
one hop from its notebook:

- ``recjudge.paths``         project folders and the environment variables that move them
- ``recjudge.settings``      engine settings read from the environment, with errors naming the variable
- ``recjudge.data``          datasets: registry, fetching (mirror folder or official URL), tidy loaders
- ``recjudge.llm``           the LLM judge engine: providers, response store, runner, reply parsing, pricing
- ``recjudge.prompts``       every prompt template (text files) and the builders that fill them
- ``recjudge.metaeval``      agreement with human judgments (Pearson/MAE/RMSE, bootstrap, Williams, multi-level) and
                             ensembles of evaluators
- ``recjudge.serendipity``   serendipity ground truth, histories, proxies (Kang et al. 2025)
- ``recjudge.explanations``  explanation evaluators and text metrics (Zhang et al. 2024)
- ``recjudge.surprise``      limits to surprise, distances, item models, time frames, kNN/MSI/LSI, one-plus-random
                             (Lima & Peres)
- ``recjudge.recsys``        recommenders, temporal splits and serendipity metrics at k (Tokutake et al. 2025)
- ``recjudge.metamorphic``   metamorphic testing of an LLM recommender (Khirbat et al. 2024)
- ``recjudge.trust``         what a judge is worth: calibration, prediction-powered inference, audits
- ``recjudge.papers``        every number printed in a paper, one CSV per table, one loader
- ``recjudge.compendium``    run plan, book build, result tables and their rendering, figure style

Layers, lowest first (nothing imports a layer above its own; ``tests/test_layout.py`` checks it): ``paths`` and
``settings`` < ``data`` < ``llm`` < ``prompts``, ``metaeval``, ``papers`` < ``compendium`` < the paper packages and
``trust`` < ``cli``.
"""

__version__ = "0.1.0"
