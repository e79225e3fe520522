"""What an LLM judge is worth: how far its scores can be trusted, and how many human labels they save.

- ``calibration``  maps from a judge's score to the human 1–5 scale, fitted out of fold by user (isotonic, ordinal)
- ``ppi``          prediction-powered inference (PPI++ through ``ppi-python``): intervals from a few human labels plus
  many judge scores, coverage over repeated draws, and the human labels a judge is worth

This package sits beside the paper packages: it reads the engine, the data and ``metaeval``, and no paper's package
imports it.
"""
