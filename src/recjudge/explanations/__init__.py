"""Explanation judges (Zhang et al. 2024).

- ``evaluators``    annotator, reference-metric, random and LLM evaluators; 3-level meta-evaluation; Table 1; ensembles
                    of evaluators (through ``recjudge.metaeval.ensembles``)
- ``text_metrics``  BLEU and ROUGE for Chinese explanation texts

Prompts for these judges live in ``recjudge.prompts.explanations``.
"""
