"""A Sphinx extension (``_config.yml``: ``sphinx.extra_extensions``) that links the first use of a newcomer's term on
each page to its glossary entry, wherever the words come from: the chapter's prose, a glued finding or a verdict.

:data:`FIRST_USE_LINKED` names the terms (the glossary's entries) and how the pages write them. On every page but the
glossary, the first place a term appears in running text becomes a glossary link, unless the page links it there
already; code, maths, headings, links and raw HTML (the result tables) are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

#: Glossary term -> how a page writes it (a regular expression). Terms a newcomer meets without a definition.
FIRST_USE_LINKED = {
    "Fisher z": r"\bFisher(?:['’]s)? z\b",
    "L1 distance": r"\bL1 distance\b",
    "SerenPrompt": r"\bSerenPrompt(?:_[12])?\b",
    "LLM4Seren": r"\bLLM4Seren\b",
    "BPRMF": r"\bBPRMF\b",
    "SASRec": r"\bSASRec\b",
    "KFN": r"\bKFN\b",
    "Avg. score@20": r"\bAvg\. [Ss]core@20\b",
    "half_down": r"\bhalf_down\b",
}
#: The page that defines the terms (its own words are never linked to itself).
GLOSSARY_PAGE = "book/glossary"
#: Nodes whose text is not running text: code, maths, headings, links, raw HTML and the glossary's own terms.
_NOT_RUNNING_TEXT = (nodes.literal, nodes.literal_block, nodes.raw, nodes.reference, nodes.title, nodes.math,
                     nodes.math_block, nodes.term, nodes.option_string, addnodes.pending_xref, addnodes.desc)


def _links_to(node: addnodes.pending_xref, term: str) -> bool:
    """Whether ``node`` is a glossary link to ``term`` (glossary terms match whatever their case)."""
    return node.get("reftype") == "term" and str(node.get("reftarget", "")).lower() == term.lower()


def _in_running_text(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, _NOT_RUNNING_TEXT):
            return False
        parent = parent.parent
    return True


def _first_use(doctree: nodes.Node, term: str, pattern: re.Pattern) -> tuple[nodes.Text, re.Match] | None:
    """The first text that writes ``term`` in running text, or None when the page links the term before it (or never
    writes it)."""
    for node in doctree.findall(lambda n: isinstance(n, (nodes.Text, addnodes.pending_xref))):
        if isinstance(node, addnodes.pending_xref):
            if _links_to(node, term):
                return None
            continue
        if not _in_running_text(node):
            continue
        match = pattern.search(node.astext())
        if match:
            return node, match
    return None


def link(term: str, text: str) -> addnodes.pending_xref:
    """A reference to ``term``'s glossary entry reading ``text``, as the ``{term}`` role makes it."""
    xref = addnodes.pending_xref("", refdomain="std", reftype="term", reftarget=term, refexplicit=True,
                                 refwarn=True)
    xref += nodes.inline(text, text, classes=["xref", "std", "std-term"])
    return xref


def link_first_uses(doctree: nodes.Node) -> Iterator[str]:
    """Link the first use of every :data:`FIRST_USE_LINKED` term in ``doctree``; yields the terms linked."""
    for term, written in FIRST_USE_LINKED.items():
        found = _first_use(doctree, term, re.compile(written))
        if found is None:
            continue
        text, match = found
        value = text.astext()
        parts = [nodes.Text(value[:match.start()]), link(term, match.group(0)), nodes.Text(value[match.end():])]
        text.parent.replace(text, [part for part in parts if not isinstance(part, nodes.Text) or part.astext()])
        yield term


class LinkFirstUses(SphinxPostTransform):
    """Runs before Sphinx resolves references (priority 10), so the links it adds resolve like the role's."""

    default_priority = 5

    def run(self, **kwargs) -> None:  # noqa: ANN003 (Sphinx's signature)
        if self.env.docname != GLOSSARY_PAGE:
            list(link_first_uses(self.document))


def setup(app) -> dict:  # noqa: ANN001 (Sphinx application)
    from recjudge.compendium.sphinx_extension import source_version

    app.add_post_transform(LinkFirstUses)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": source_version(__file__)}


__all__ = ["FIRST_USE_LINKED", "GLOSSARY_PAGE", "LinkFirstUses", "link", "link_first_uses", "setup"]
