"""`glm1m summarize A B C --strategy look-up` (issue 28, item 2) through the real demo server with
glm1m's GLM-4 tool parser: three real manuals, the model's first turn held to one lookup, carried out
by glm1m on the manuals' text and said on stderr as it happens, then the answer on stdout."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.integration.test_summarize_set import SET_NAME, glm1m, manuals  # noqa: F401  (a fixture)

pytestmark = pytest.mark.server
LOOKUP = re.compile(r"^glm1m: (Find: .+|Read: .+) → (found .+|nothing found)$", re.M)
LOOKUP_ZH = re.compile(r"^glm1m: (查找：.+|阅读：.+) → (找到 .+|未找到)$", re.M)


def test_a_set_looked_up_says_each_lookup_and_answers(model_server, manuals: list[Path],  # noqa: F811
                                                      tmp_path: Path) -> None:
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data"), "GLM1M_LOOKUP_CALLS": "2"}
    summarize = ("summarize", *map(str, manuals), "--max-tokens", "16", "--base-url", model_server.base_url,
                 "--strategy", "look-up", "--question", "Which program prints columns?")
    run = glm1m(*summarize, env=env)
    assert run.returncode == 0, run.stderr
    assert re.search(rf"^glm1m: {re.escape(SET_NAME)}: 3 documents, .*Strategy: look-up\.$", run.stderr, re.M)
    lookups = LOOKUP.findall(run.stderr)
    assert 1 <= len(lookups) <= 2, run.stderr  # at least the first turn's, at most GLM1M_LOOKUP_CALLS
    assert run.stdout.strip()

    chinese = glm1m(*summarize, env={**env, "GLM1M_LANG": "zh"})
    assert chinese.returncode == 0, chinese.stderr
    assert LOOKUP_ZH.search(chinese.stderr) and not LOOKUP.search(chinese.stderr), chinese.stderr
    assert "glm1m: A（README.md）、B（col.txt）和 C（README.html）：" in chinese.stderr, chinese.stderr
