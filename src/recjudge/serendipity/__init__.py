"""Serendipity judges (Kang et al. 2025; Tokutake et al. 2025).

- ``ground_truth``  serendipity ground truth of Serendipity-2018 and Taobao, user histories, samples, agreement tables
- ``proxies``       the proxy metrics SOG, SNPR, PURS, DESR and a random baseline

Prompts for these judges live in ``recjudge.prompts.serendipity``.
"""
