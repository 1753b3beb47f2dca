"""The app's own sentences in English and Simplified Chinese, chosen from the browser's language.

Chainlit takes the language from the first tag of the socket's Accept-Language header (a zh-CN
browser gets "zh-CN") and translates its own parts from `.chainlit/translations`; the sentences
glm1m writes follow the same choice: any "zh" tag reads Chinese (Simplified), everything else
English. The sentences themselves, the page's and the core's errors alike, are in the one catalog
(glm1m/catalog/); this module is the page's door to it, with the words it puts together (units,
stages, progress). No Chainlit import here, so it is tested without a server.
"""

from __future__ import annotations

import re

from glm1m.catalog import CATALOG as TEXT, EN, ZH, language_of, render as t
from glm1m.progress import MIN_RATE_S, Progress

__all__ = ["EN", "TEXT", "ZH", "language_of", "t"]  # the catalog's, as the page has named them


# The core's Progress stages and units, as the page says them in Chinese.
STAGES_ZH = {"reading": "读取", "translating": "翻译", "counting tokens": "统计词元",
             "combining notes": "汇总笔记", "reading scanned pages (OCR)": "识别扫描页（OCR）"}
UNITS_ZH = {"rows": "行", "cells": "个单元格", "pages": "页", "sections": "节", "parts": "段",
            "groups": "组", "locations": "处"}  # locations: a set's pages and sections together


def stage_words(stage: str) -> str:
    """A core stage in Chinese; "combining notes, round 2" keeps its round."""
    if (rounds := re.fullmatch(r"combining notes, round (\d+)", stage)) is not None:
        return f"汇总笔记（第 {rounds.group(1)} 轮）"
    return STAGES_ZH.get(stage, stage)


def default_target(lang: str) -> str:
    """The target language a spreadsheet is translated into unless chosen: the other of the two."""
    return "English" if lang == ZH else "简体中文"


def target_words(lang: str, target: str) -> str:
    """A target language as a sentence says it ("简体中文" reads "Simplified Chinese" in English)."""
    key = f"language_{target}"
    return t(lang, key) if key in TEXT else target


def unit_words(lang: str, unit: str) -> str:
    return UNITS_ZH.get(unit, unit) if lang == ZH else unit


def seconds(lang: str, n: float) -> str:
    if n >= 90:
        return t(lang, "minutes", n=n / 60)
    return t(lang, "seconds" if n < 10 else "seconds_whole", n=n)


def count_of(lang: str, n: int, unit: str) -> str:
    """"6 pages", "1 page", "6 页"; unit is "pages" or "parts" (English plural)."""
    if unit == "pages":
        return t(lang, "pages", count=n)
    if lang == ZH:
        return f"{n:,} {UNITS_ZH.get(unit, unit)}"
    return f"{n:,} {unit.removesuffix('s') if n == 1 else unit}"


def progress_line(lang: str, progress: Progress, now: float) -> str:
    """Progress as a sentence; English is the core's own line. `now` is time.monotonic()."""
    if lang != ZH:
        return progress.line()
    unit = UNITS_ZH.get(progress.unit, progress.unit)
    text = f"{stage_words(progress.stage)}：{progress.done:,} / {progress.total:,} {unit}"
    if progress.failed:
        text += f"（{progress.failed:,} 失败）"
    if progress.in_flight:
        text += f"，进行中 {progress.in_flight:,}"
    said: list[str] = []
    tokens_per_s = progress.tokens_per_s
    if progress.tokens:
        said.append(f"已生成 {progress.tokens:,} 个词元")
    if tokens_per_s is not None:
        said.append(f"每秒 {tokens_per_s:,.0f} 个词元")
    if progress.says_unit_rate() and now - progress.started >= MIN_RATE_S:
        said.append(f"每秒 {progress.per_s:.1f} {unit}")
    if (eta := progress.eta_said()) is not None:
        said.append(f"约剩 {eta:.0f} 秒")
    return text + (" — " + "，".join(said) if said else "")
