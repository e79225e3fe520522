"""Each chapter's page, one module per chapter, named as its notebook (``notebooks/<chapter>.md``).

A chapter's notebook shows the few calls that carry its analysis (load the study, ask the judges, compute the
agreement) and keeps its prose; what only dresses the page lives here: the opening box's facts, the tables with their
captions and formats, the figures, and the glued findings with the rules that choose their words. This layer sits
above the paper packages, whose analysis it presents.

Pages here: ``normalised_surprise``, ``metamorphic_recommender``.
"""
