"""The words of a progress line (glm1m/progress.py), said by both doors: the page's status line and
the CLI's bar and lines. A stage is an id (glm1m.progress.Stage) with its fields, said here as
`stage_<id>`; a unit ("rows", "pages", ...) is said here as `unit_<unit>`, its English form chosen
by `count`. (English, Chinese) per id; see glm1m/catalog/__init__.py for the convention.

`translating: 30 of 300 rows (2 failed), 64 in flight — 2,310 tokens, 410 tokens/s, about 93 s left`
`翻译：30 / 300 行（2 个失败），进行中 64——已生成 2,310 个词元，每秒 410 个词元，约剩 93 秒`
"""

from __future__ import annotations

PROGRESS: dict[str, tuple[str | tuple[str, str], str]] = {
    # The stages (glm1m.progress.Stage); each takes `round`, which only a round of combining says.
    "stage_reading": ("reading", "读取"),
    "stage_ocr": ("reading scanned pages (OCR)", "识别扫描页（OCR）"),
    "stage_counting": ("counting tokens", "统计词元"),
    "stage_translating": ("translating", "翻译"),
    "stage_combining": ("combining notes", "汇总笔记"),
    "stage_combining_round": ("combining notes, round {round}", "汇总笔记（第 {round} 轮）"),
    # What a stage counts; `count` picks the English form (a rate's unit is plural: count=0).
    "unit_rows": (("row", "rows"), "行"),
    "unit_cells": (("cell", "cells"), "个单元格"),
    "unit_pages": (("page", "pages"), "页"),
    "unit_sections": (("section", "sections"), "节"),
    "unit_parts": (("part", "parts"), "段"),
    "unit_groups": (("group", "groups"), "组"),
    "unit_locations": (("location", "locations"), "处"),  # a set's pages and sections together
    "counted": ("{count:,} {unit}", "{count:,} {unit}"),  # "6 pages", "6 页"
    # The line: the stage and its counts, then each detail once it is known.
    "p_line": ("{stage}: {done:,} of {total:,} {unit}{details}",
               "{stage}：{done:,} / {total:,} {unit}{details}"),
    "p_failed": (" ({count:,} failed)", "（{count:,} 个失败）"),
    "p_in_flight": (", {count:,} in flight", "，进行中 {count:,}"),
    "p_then": (" — ", "——"),  # before what moves and what is known of the rest
    "p_sep": (", ", "，"),  # between those
    "p_tokens": (("{count:,} token", "{count:,} tokens"), "已生成 {count:,} 个词元"),
    "p_tokens_so_far": (("{count:,} token so far", "{count:,} tokens so far"), "已生成 {count:,} 个词元"),
    "p_tokens_rate": ("{rate:,.0f} tokens/s", "每秒 {rate:,.0f} 个词元"),
    "p_unit_rate": ("{rate:.1f} {unit}/s", "每秒 {rate:.1f} {unit}"),
    "p_rate": ("{rate:.1f}/s", "每秒 {rate:.1f}"),
    "p_eta": ("about {seconds:.0f} s left", "约剩 {seconds:.0f} 秒"),
}
