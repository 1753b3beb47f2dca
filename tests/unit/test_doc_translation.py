"""A document translated in place (glm1m/doc_translation/) with the scripted model: the model
"translates" a section into its upper case, so the output must be the input with exactly the
human text upper-cased and every other byte (markers, code, link targets, tags, blank lines) as
it was; a failed section stays in the original and is marked; a second run asks only the
sections the first did not finish."""

from __future__ import annotations

import asyncio
import csv
import json
import re
from pathlib import Path

from glm1m.doc_translation.consistency import Consistency
from glm1m.doc_translation.job import DocJob, run_document
from glm1m.doc_translation.prompt import GLOSSARY_ASK
from glm1m.translation.job import checkpoint_path
from tests.support.scripted_llm import ScriptedLlm, user_text

ASK = GLOSSARY_ASK.split(",")[0]
MARKDOWN = """# Getting started

Install the *tool* with [pip](https://pypi.org/project/tool/) and run `tool --help`.
Read the guide.

- first item
- second item with ![logo](img/logo.png)
  continued here

```sh
echo "code stays"
```

| Name | Meaning |
|------|---------|
| foo  | a thing |

> quoted words

### Heading over a line
A line right under it.


Last paragraph.
"""


def glossary_or_upper(terms: dict[str, str]):
    def reply(messages: list) -> str:
        text = user_text(messages)
        if text.startswith(ASK):
            return json.dumps({"terms": [{"term": k, "translation": v} for k, v in terms.items()]})
        return text.upper()
    return reply


def run(path: Path, llm: ScriptedLlm, out: Path, notes: list | None = None, **job: object):
    said = notes if notes is not None else []
    return asyncio.run(run_document(path, DocJob("French", **job), llm, out, on_note=said.append))


def test_markdown_keeps_its_structure_and_translates_only_the_human_text(tmp_path: Path) -> None:
    src = tmp_path / "guide.md"
    src.write_text(MARKDOWN, encoding="utf-8")
    out = tmp_path / "guide.fr.md"
    llm = ScriptedLlm(reply=glossary_or_upper({"tool": "outil"}))
    summary = run(src, llm, out)
    assert summary.complete and summary.failed == 0
    expected = MARKDOWN
    for text in ["Getting started", "Install the *tool* with [pip]", "and run", "Read the guide.",
                 "first item", "second item with ![logo]", "continued here", "Name", "Meaning",
                 "foo", "a thing", "quoted words", "Heading over a line",
                 "A line right under it.", "Last paragraph."]:
        expected = expected.replace(text, text.upper(), 1)
    assert out.read_text(encoding="utf-8") == expected
    sent = [c.text for c in llm.calls if not c.text.startswith(ASK)]
    assert "⟦1⟧" in sent[1] and "pypi.org" not in sent[1]  # the link target never went out
    assert not any("echo" in text for text in sent)  # code is not sent
    # Every section's request begins with the same system message and document part.
    prefixes = {json.dumps(c.messages[:2]) for c in llm.calls if not c.text.startswith(ASK)}
    assert len(prefixes) == 1 and "Last paragraph." in llm.calls[1].messages[1]["content"]
    assert "tool → outil" in llm.calls[1].messages[1]["content"]
    # The glossary was written beside the output; "tool" is in one translated section's source.
    assert list(csv.reader(summary.glossary.open(encoding="utf-8"))) == [["term", "translation"],
                                                                       ["tool", "outil"]]
    assert summary.consistency == Consistency(uses=1, kept=0)  # the upper case holds no "outil"
    assert not checkpoint_path(out).exists()


def test_text_keeps_blank_lines_and_indentation(tmp_path: Path) -> None:
    text = "Title line\n\n  indented para\n  second line\n\n\n\nend\n"
    src = tmp_path / "notes.txt"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out.txt"
    run(src, ScriptedLlm(), out)
    assert out.read_text(encoding="utf-8") == text.upper()


HTML = """<!DOCTYPE html>
<html><head><title>The manual</title><style>p { color: red }</style></head>
<body>
<h1 id="top">Intro &amp; usage</h1>
<p>Use <a href="x.html#opt">the option</a> wisely.</p>
<ul><li>one<ul><li>nested</li></ul></li></ul>
<table><tr><th>Key</th><td>value</td></tr></table>
<pre>kept code</pre>
<div>loose text</div>
<img src="a.png" alt="pic">
</body></html>
"""


def test_html_keeps_tags_and_attributes_and_says_what_stays(tmp_path: Path) -> None:
    src = tmp_path / "manual.html"
    src.write_text(HTML, encoding="utf-8")
    out = tmp_path / "manual.fr.html"
    notes: list = []
    summary = run(src, ScriptedLlm(reply=upper_outside_tags), out, notes)
    assert summary.total == 7 and summary.complete  # title, h1, p, li, nested li, th, td
    page = out.read_text(encoding="utf-8")
    for kept in ('<h1 id="top">', '<a href="x.html#opt">', "<pre>kept code</pre>", "p { color: red }",
                 '<img src="a.png" alt="pic">', "<div>loose text</div>"):
        assert kept in page
    for done in ("<title>THE MANUAL</title>", "INTRO &amp; USAGE",
                 'USE <a href="x.html#opt">THE OPTION</a> WISELY.', "<li>ONE<ul>", "<li>NESTED</li>",
                 "<th>KEY</th>", "<td>VALUE</td>"):
        assert done in page, done
    assert [n.key for n in notes if n.key == "doc_tr_html_outside"] == ["doc_tr_html_outside"]
    assert summary.notes == ()  # every inline tag came back


def upper_outside_tags(messages: list) -> str:
    """A model that keeps every tag and upper-cases the text around them."""
    return re.sub(r"(^|>)([^<]*)", lambda m: m.group(1) + m.group(2).upper(), user_text(messages))


def test_html_answer_that_changes_tags_falls_back_to_the_text(tmp_path: Path) -> None:
    src = tmp_path / "a.html"
    src.write_text('<p>Use <a href="x">the option</a> now.</p>', encoding="utf-8")
    out = tmp_path / "b.html"
    llm = ScriptedLlm(reply=lambda m: "" if user_text(m).startswith(ASK) else
                      user_text(m).upper())  # "<A HREF" is not the tag that was sent
    summary = run(src, llm, out)
    assert out.read_text(encoding="utf-8") == "<p>USE THE OPTION NOW.</p>"
    assert [n.key for n in summary.notes] == ["doc_tr_html_tags_lost"]


def test_text_layout_knows_its_slots_by_what_it_masked_not_by_reading_its_text() -> None:
    """The ⟦n⟧ glm1m puts in a section's text are counted where it puts them; a ⟦n⟧ the file
    itself holds is the file's text (it made the old read-back raise IndexError)."""
    from glm1m.doc_translation.text_layout import TextLayout
    from glm1m.translation.fanout import Result

    plain = TextLayout(markdown=False, newline="\n")
    plain.add([""], ["see ⟦1⟧ here"])
    section = plain.sections[0]
    assert section.source == "see ⟦1⟧ here" and plain.kept(section, "siehe ⟦1⟧ hier")
    assert plain.render(0, {0: Result(0, "siehe ⟦1⟧ hier", None)}, "en") == "siehe ⟦1⟧ hier"

    markdown = TextLayout(markdown=True, newline="\n")
    markdown.add(["- "], ["run `make` or ⟦7⟧"])
    section = markdown.sections[0]
    assert (section.text, section.source) == ("run ⟦1⟧ or ⟦7⟧", "run `make` or ⟦7⟧")
    assert markdown.kept(section, "⟦1⟧ ausführen oder ⟦7⟧")
    assert not markdown.kept(section, "ausführen oder ⟦7⟧")
    assert not markdown.kept(section, "⟦1⟧ ⟦1⟧ ausführen")
    done = {0: Result(0, "⟦1⟧ ausführen oder ⟦7⟧", None)}
    assert markdown.render(0, done, "en") == "- `make` ausführen oder ⟦7⟧"
    assert markdown.render(0, {}, "en").startswith("- run `make` or ⟦7⟧ <!-- ")
