"""recjudge: large language models as judges of recommender systems beyond accuracy.

A thin package behind a Jupyter Book of parameterised notebooks. Sub-packages and modules, one per concept:

- ``recjudge.data``      dataset registry, fetching (mirror folder or official URL) and tidy loaders
- ``recjudge.llm``       the LLM judge engine: providers, response store, runner, reply parsing
- ``recjudge.prompts``   prompt templates and the builders that fill them
- ``recjudge.metaeval``  Likert rescaling, agreement statistics, multi-level correlations, bootstrap intervals
- ``recjudge.surprise``  potential-surprise limits and normalised surprise (Lima & Peres)
"""

__version__ = "0.1.0"
