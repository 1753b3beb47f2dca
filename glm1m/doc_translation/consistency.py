"""How consistently a document was translated: for every glossary term found in a section's
source, whether that section's translation holds the glossary's target."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from glm1m.catalog import Said, said
from glm1m.doc_translation.sections import Section, translation
from glm1m.translation.fanout import Result


@dataclass(frozen=True)
class Consistency:
    uses: int  # (section, term) pairs: a term found in a translated section's source
    kept: int  # of those, the ones whose translation holds the glossary's target

    def said(self) -> Said:
        return said("doc_tr_consistency", kept=self.kept, uses=self.uses)


def found(term: str, text: str) -> bool:
    """`term` in `text`, as a whole word where it begins or ends with a Latin letter or digit
    ("API" not in "rapid"); Chinese has no spaces to stand between words."""
    before = r"(?<![A-Za-z0-9])" if term[:1].isascii() and term[:1].isalnum() else ""
    after = r"(?![A-Za-z0-9])" if term[-1:].isascii() and term[-1:].isalnum() else ""
    return re.search(before + re.escape(term) + after, text, re.IGNORECASE) is not None


def measure(sections: Sequence[Section], results: Mapping[int, Result],
            glossary: Sequence[tuple[str, str]]) -> Consistency:
    uses = kept = 0
    for section in sections:
        done = translation(results, section.index)
        if done is None:
            continue
        for term, target in glossary:
            if term and target and found(term, section.source):
                uses += 1
                kept += target.casefold() in done.casefold()
    return Consistency(uses, kept)
