"""`glm1m summarize A B C` a second time, against the real demo server: the set's count and its
prompt's token ids were kept on the shelf by the first run, so the second sends the server one
small /tokenize (the question's frame), nothing of the set's text, asks over /v1/completions as
ids, and says this server read the set before (on one H200 the same 883,478-token set asked again
began after 7.00 s, 4 s of it counting and tokenizing the set again)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.integration.test_shelf_cli import answers, glm1m, tokenize_counter
from tests.integration.test_summarize_set import MANUALS, manuals

pytestmark = pytest.mark.server
__all__ = ["answers", "manuals", "tokenize_counter"]  # fixtures used by name


def test_a_set_asked_again_is_neither_counted_nor_tokenized_again(model_server, manuals: list[Path],
                                                                  tokenize_counter, answers,
                                                                  tmp_path: Path) -> None:
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data"),
           "GLM1M_TOKENIZE_URL": tokenize_counter.url}
    summarize = ("summarize", *map(str, manuals), "--max-tokens", "8", "--strategy", "whole",
                 "--base-url", f"{answers.url}/v1", "--question", "Which program does each describe?")
    first, first_s = glm1m(*summarize, env=env)
    assert first.returncode == 0, first.stderr
    assert "Until the first answer starts" in first.stderr and "read this set" not in first.stderr
    counted_first = tokenize_counter.requests_seen
    assert counted_first >= 4  # the set's count, the question's frame, the prompt's ids, their frame

    second, second_s = glm1m(*summarize, env=env)
    assert second.returncode == 0, second.stderr
    for path in MANUALS:
        assert f"glm1m: {path.name}: on the shelf since" in second.stderr
    assert tokenize_counter.requests_seen - counted_first == 1  # the question's frame only
    assert "This server read this set of documents before (" in second.stderr
    assert "Until the first answer starts" not in second.stderr
    sent = [body for body, _ in answers.journal]
    assert len(sent) == 2 and all(isinstance(body.get("prompt"), list) for body in sent)
    assert sent[1]["prompt"] == sent[0]["prompt"]  # the same question on the same set, as ids
    assert len(list((tmp_path / "data" / "shelf").rglob("*.ids"))) == 1
    print(f"first {first_s:.2f} s, second {second_s:.2f} s")
