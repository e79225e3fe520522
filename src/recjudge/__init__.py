"""recjudge: large language models as judges of recommender systems beyond accuracy.

A thin package behind a Jupyter Book of parameterised notebooks; one folder per concept, so that a chapter's code is
one hop from its notebook:

- ``recjudge.data``          datasets: registry, fetching (mirror folder or official URL), tidy loaders
- ``recjudge.llm``           the LLM judge engine: providers, response store, runner, reply parsing, pricing
- ``recjudge.prompts``       every prompt template (text files) and the builders that fill them
- ``recjudge.metaeval``      agreement with human judgments (Pearson/MAE/RMSE, bootstrap, Williams, multi-level) and
                             ensembles of evaluators
- ``recjudge.serendipity``   serendipity ground truth, histories, proxies (Kang et al. 2025)
- ``recjudge.explanations``  explanation evaluators and text metrics (Zhang et al. 2024)
- ``recjudge.surprise``      limits to surprise, distances, item models, time frames, kNN/MSI/LSI, one-plus-random
                             (Lima & Peres)
- ``recjudge.compendium``    run plan, book build, result tables and their rendering, figure style, paths

Layers: ``data``, ``llm``, ``metaeval`` and ``compendium`` never import a paper's package (``serendipity``,
``explanations``, ``surprise``); paper packages may import them.
"""

__version__ = "0.1.0"
