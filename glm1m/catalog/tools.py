"""The catalog's entries for looking things up (issue 28: documents/lookup.py): the strategy's name,
the steps that show each lookup, the waiting line and the record, English and Chinese. What a
lookup gives back to the model stays as the model reads it (the documents' own text)."""

from __future__ import annotations

TOOLS: dict[str, tuple[str | tuple[str, str], str]] = {
    "look_up": ("by looking things up", "查找阅读"),
    "lookup_find": ("Find: {words}", "查找：{words}"),
    "lookup_read": ("Read: {location}", "阅读：{location}"),
    "lookup_none": ("nothing found", "未找到"),
    "lookup_found": ("found {places}", "找到 {places}"),
    "waiting_lookup": ("Looking things up in {name}{done} … {elapsed:.0f} s",
                       "正在 {name} 中查找阅读{done} … {elapsed:.0f} 秒"),
    "waiting_lookup_done": ((": {count} lookup so far", ": {count} lookups so far"), "（已查找 {count} 次）"),
    "doc_read_lookups": (("Looked things up in **{name}**: {count} lookup, in {seconds}.",
                          "Looked things up in **{name}**: {count} lookups, in {seconds}."),
                         "已在 **{name}** 中查找阅读：{count} 次查找，用时 {seconds}。"),
}
