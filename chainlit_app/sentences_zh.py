"""Sentences the web door writes in English outside i18n.py — the upload checks (upload_guard.py)
and the one-table-per-message notice (uploads.py) — as a Chinese page shows them.

Those modules build their sentences from their own lists (the kinds of file, their limits); this
reads the finished English sentence back, keeps its fields (names, sizes, settings) and says the
same in Chinese, so the lists stay in one place. A sentence no entry matches is returned as it
is: English, never lost.
"""

from __future__ import annotations

import re

USES_ZH = {"to summarise it or ask about it": "用于总结或提问", "to translate a column": "用于翻译一列",
           "to translate columns of a sheet": "用于翻译工作表中的列"}
OFFER = re.compile(r"an? (?P<names>[^()]+?) \((?P<use>[^)]+)\)")


def _names(english: str) -> str:
    return re.sub(r", | or ", "、", english)


def _offers(found: re.Match[str]) -> dict[str, str]:
    offers = [f"{_names(o['names'])}（{USES_ZH.get(o['use'], o['use'])}）"
              for o in OFFER.finditer(found["offers"])]
    return {"name": found["name"], "offers": "，或".join(offers)}


def _limits(found: re.Match[str]) -> dict[str, str]:
    limits = found["limits"].replace(" up to ", " 最大 ").replace(", ", "，")
    return {"size": found["size"], "limits": limits}


def _left_out(found: re.Match[str]) -> dict[str, str]:
    return {"used": found["used"], "names": _names(found["names"])}


def _fields(found: re.Match[str]) -> dict[str, str]:
    return {k: v for k, v in found.groupdict().items() if v is not None}


CATALOG = (
    (re.compile(r"(?P<name>.+) is not a file glm1m reads: attach (?P<offers>.+)\."),
     "{name} 不是 glm1m 能读取的文件：请附上 {offers}。", _offers),
    (re.compile(r"(?P<name>.+) is larger than (?P<limit>[\d.,]+ MB), the limit for (?P<kind>.+?) files "
                r"\((?P<setting>GLM1M_\w+)\)\."),
     "{name} 超过 {limit}，这是 {kind} 文件的上限（{setting}）。", _fields),
    (re.compile(r"The upload is (?P<size>[\d,]+) MB, more than glm1m takes for any file "
                r"\((?P<limits>.+)\)\."),
     "上传的文件有 {size} MB，超过了 glm1m 对任何文件的上限（{limits}）。", _limits),
    (re.compile(r"(?P<name>.+) is empty \(0 bytes\): there is nothing to read\."),
     "{name} 是空文件（0 字节）：没有可读取的内容。请重新附上有内容的文件。", _fields),
    (re.compile(r"Send one file per upload, as the page's paperclip does\."),
     "每次上传只发送一个文件（页面上的回形针就是这样做的）。", _fields),
    (re.compile(r"The upload was cut short or is not a well-formed form"),
     "上传被中断或格式不正确；请重新附上文件。", _fields),
    (re.compile(r"The upload holds no file; attach one\."), "上传中没有文件；请附上一个。", _fields),
    (re.compile(r"Only (?P<used>.+?) is read: a table is translated on its own, so (?P<names>.+) "
                r"(?:was|were) not read\."),
     "只读取了 {used}：表格要单独翻译，因此 {names} 未被读取。请把每个表格放在单独的消息中发送；"
     "文档（可以几份一起）放在不含表格的消息中。", _left_out),
    (re.compile(r"Only (?P<used>.+?) is read: one table per message, so (?P<names>.+) "
                r"(?:was|were) not read\."),
     "只读取了 {used}：每条消息只翻译一个表格，因此 {names} 未被读取。请把每个表格放在单独的消息中"
     "发送。", _left_out),
)


def sentence_in_chinese(text: str) -> str:
    """`text` in Chinese when an entry knows it, else unchanged."""
    for pattern, chinese, fields in CATALOG:
        if found := pattern.search(text):
            return chinese.format(**fields(found))
    return text
