"""Planted judges: judges whose effects are known, sent through the reader's path, to measure how often the claims'
rule gives each verdict.

- ``model``: how a planted judge scores an answer whose truth it holds, and the exact population statistics
  (correlation, error) that make each planted effect a known number
- ``effects``: the effects a planted value carries, read from the papers' printed tables
- ``reading``: which template a prompt was filled from, and its fields, read from the messages alone
- ``key``: the truth a planted judge holds, built from the data (Serendipity-2018, the re-evaluation's lists, Lu et
  al.'s explanations)
- ``judge``: a planted judge's name, parameters and answers (one function for the server and the simulation)
- ``server``: the planted judges' OpenAI-compatible server on loopback (``recjudge planted serve``)
- ``simulation``: each claim a reader's judge decides, simulated in process through the chapters' own analysis and
  the claims registry (the reader's path without a server)
- ``characteristics``: how often the rule gives each verdict, per claim, planted value and profile, and the digest
  of what that was computed from
- ``cli``: the ``recjudge planted`` command
"""
