"""The book's plumbing.

- ``results``  result tables written under ``results/<chapter>/``
- ``kernels``  the numeric kernels notebooks run on, the same on AVX2 and AVX-512 machines
- ``runplan``  the run plan: notebooks x parameters, executed with papermill, skipped when inputs are unchanged;
  scale profiles, the shared ``judges`` parameter, and ``recjudge run`` with its ``--judge``/``--profile``/``--plan``
- ``variants``  a reader's judges and profile run beside the book (``variants/<judge>-<profile>/``), and the plan's
  per-chapter sums of what would be asked and cost
- ``cell_selection``  which cells a run executes: ``only:VARIANT`` cells, and without a dataset its ``needs:NAME``
  cells left out with a "Data needed" box instead
- ``book``     the offline Jupyter Book build (``recjudge book``: steps, warnings as errors, timings)
- ``vendored_assets``  the book's MathJax, vendored once from the npm package pinned in ``package-lock.json``
- ``html_checks``  checks of a built book's HTML: ``index.html`` written, no unrendered template, no foreign hosts
- ``sphinx_extension``  the book's Sphinx extension: no Thebe loader, author-year bibliography, repository buttons,
  each executed chapter's labels
- ``toc``      the table of contents (``_toc.yml``): the files it lists, its chapters' numbers and its appendix
  pages' letters
- ``appendix_numbers``  a Sphinx extension numbering the appendix pages' figures under their letter (Fig. A.1)
- ``glossary_links``  a Sphinx extension linking a newcomer's term to the glossary where a page first uses it
- ``labels``   a chapter's cross-reference labels belong to its run: a copied chapter's never collide with its
  original's
- ``variant_book``  a variant's own book: its executed notebooks (the committed book's where it ran none) staged and
  built into ``_build/variants/<name>/html``
- ``preview_book``  a student's preview: the book with only the named chapters executed (and what they read), the
  others marked "not run in this build", built into ``_build/preview/html`` (``recjudge book --only NAME``)
- ``publish``  the built book online: refuses a partial one, commits the site to a gh-pages branch (ghp-import) or
  mirrors it into a folder, with its build record (``build-info.json``) and a line on the landing page
- ``tables``   the one renderer of the tables a chapter shows: numbers formatted by kind, the paper's beside ours
- ``figures``  figures legible at the column width: colour-blind-safe palette, few series a panel, caption and alt text,
  and the plots chapters share
- ``prose``    a chapter's sentences kept as prose beside its notebook (``notebooks/prose/<chapter>.md``): named
  passages with slots its page module fills in
- ``pages``    the frame every chapter shares: opening box, closing verdict, download links, and the one small-n rule
  (``MIN_ANSWERS``: "too few answers (n)")
- ``claims``   the claims registry: every paper claim a chapter examines, its record in a build, and the verdict
  boxes, landing findings and claims matrix rendered from the records
- ``claim_evidence``  what a claim's reader finds (the paper's numbers and ours, n, interval, checks, what differs,
  what is missing) and the one rule that chooses its verdict
- ``claim_readers``  each claim's reader: its numbers read by name from the result tables, and the book's thresholds
- ``claim_intervals``  the numbers' intervals and the checks built from them, shared by the readers and the pages (a
  number with its interval, Fisher's interval, a contrast of two correlations, labels saved by the ρ² rule)
- ``comparisons``  checks of comparisons on the same answers (two correlations, two errors, a ranking), and the
  checks a reader's judges' rows give the claims about capable LLM judges
- ``trust_rules``  the rules that word part V's findings (a calibrated judge beating a constant answer, a judge saving
  labels), each reading its number's interval, shared by the trust chapter and the at-a-glance page
- ``at_a_glance``  the at-a-glance page's rows: one per paper and question, what ran here and what it measured, every
  number read from the result tables by name
- ``headline_numbers``  the at-a-glance page's headline numbers (the paper's, the book's judge's with n, interval and
  how it was chosen, a variant's)
- ``answer``   the book's answer to its question, generated from the registry: the short answer that opens the
  landing page (with the caveat that no capable LLM ran here) and the closing page "What we learned": the evidence as
  a whole, then per paper

This layer imports no paper's package.
"""
