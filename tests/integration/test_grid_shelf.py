"""`glm1m grid --shelf NAME` on the real demo server: a document read once by an earlier grid is
asked again from its kept text, with its file gone (issue 36: documents from files, folders, or
shelf entries). A name the shelf does not hold, or no document named at all, is one sentence and
exit 2 before anything is asked."""

from __future__ import annotations

import os
from pathlib import Path

from openpyxl import load_workbook

from tests.integration.test_summarize_set import glm1m

REPORT = "# Harbour report\n\n" + "\n\n".join(
    f"## Week {n}\n\nThe harbour of Lune handled {40 + n} ships in week {n}; the pilot on duty was "
    f"{['Ada', 'Bo', 'Cy'][n % 3]}." for n in range(1, 12))


def grid_rows(path: Path) -> list[list[object]]:
    return [list(row) for row in load_workbook(path)["grid"].iter_rows(values_only=True)]


def test_a_shelf_document_is_asked_from_its_kept_text_after_its_file_is_gone(model_server, tmp_path: Path) -> None:
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data")}
    report = tmp_path / "harbour.md"
    report.write_text(REPORT, encoding="utf-8")
    served = ("--max-tokens", "32", "--base-url", model_server.base_url)
    first = glm1m("grid", str(report), "--question", "How many ships came in week 3?", "-o",
                  str(tmp_path / "first.xlsx"), *served, env=env)
    assert first.returncode in (0, 1), first.stderr
    report.unlink()  # from here on only the shelf holds the document

    again = glm1m("grid", "--shelf", "harbour.md", "--question", "Who was the pilot in week 2?",
                  "--question", "Which harbour is this?", "-o", str(tmp_path / "second.xlsx"), *served,
                  env=env)
    assert again.returncode in (0, 1), again.stderr  # 1: the demo model's noise marked
    assert "2 cells: " in again.stderr and "0 documents not read" in again.stderr, again.stderr
    rows = grid_rows(tmp_path / "second.xlsx")
    assert rows[0][0] == "document" and [row[0] for row in rows[1:]] == ["harbour.md"]
    assert all(cell and str(cell).strip() for cell in rows[1][1:]), rows

    listed = glm1m("shelf", "list", env=env)
    digest = next(word for line in listed.stdout.splitlines() if "harbour.md" in line
                  for word in line.split() if len(word) >= 8 and all(c in "0123456789abcdef" for c in word))
    by_hash = glm1m("grid", "--shelf", digest[:8], "--question", "Which harbour is this?", "-o",
                    str(tmp_path / "third.xlsx"), *served, env=env)
    assert by_hash.returncode in (0, 1), by_hash.stderr
    assert [row[0] for row in grid_rows(tmp_path / "third.xlsx")[1:]] == ["harbour.md"]


def test_a_name_the_shelf_lacks_or_no_document_at_all_is_one_sentence(tmp_path: Path) -> None:
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data")}
    missing = glm1m("grid", "--shelf", "nothing-such.pdf", "--question", "Q?", "-o", str(tmp_path / "g.xlsx"),
                    env=env)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        "glm1m: No document on the shelf is named 'nothing-such.pdf' (see `glm1m shelf list`)."], missing.stderr
    nothing = glm1m("grid", "--question", "Q?", env=env)
    assert nothing.returncode == 2
    assert "Name the documents to ask: files, folders, or --shelf NAME" in nothing.stderr, nothing.stderr
    assert "Traceback" not in missing.stderr + nothing.stderr
    assert not (tmp_path / "g.xlsx").exists()
