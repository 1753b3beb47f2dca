"""The core's error sentences as a Chinese reader sees them.

The core writes every UserFacingError in English (the CLI's language, and the one place each
sentence is made). The page shows the common ones in Chinese: each entry below matches one core
sentence by its error class and wording, takes the fields it needs (a file name, a number) from
it, and says the same in Chinese. A sentence no entry matches keeps its English text behind a
Chinese lead of its class, so nothing is lost: a rare failure reads "文档无法使用：…(English)".
tests/unit/test_i18n_errors.py raises the real core errors and checks each entry matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from glm1m.documents.shelf import ShelfFull
from glm1m.errors import (
    ContextTooLong,
    CsvError,
    DocumentError,
    JobAlreadyRunning,
    ServerBusy,
    ServerError,
    ServerTooSlow,
    ServerUnavailable,
    UserFacingError,
)


@dataclass(frozen=True)
class Entry:
    kind: type[UserFacingError]
    english: re.Pattern[str]  # the core's sentence, fields as named groups
    chinese: str  # str.format over those groups


def entry(kind: type[UserFacingError], english: str, chinese: str) -> Entry:
    return Entry(kind, re.compile(english, re.DOTALL), chinese)


CATALOG = (
    entry(ServerUnavailable, r"The model server at (?P<url>\S+) is not answering\.",
          "模型服务器（{url}）没有响应。请用 `make run` 或 `glm1m serve` 启动它（或等它启动完毕），"
          "然后重新发送消息。"),
    entry(ServerUnavailable, r"The model server stopped in the middle of the answer\.",
          "模型服务器在回答中途停止了。已显示的部分会保留；服务器恢复后请重新发送消息。"),
    entry(ServerUnavailable, r"The model server at (?P<url>\S+) stopped answering its health check",
          "模型服务器（{url}）在读取提示时停止响应健康检查。请确认它仍在运行（或用 `glm1m serve` 重启），"
          "然后重新发送消息。"),
    entry(ServerBusy, r"The model server is overloaded or restarting \(HTTP (?P<status>\d+)\)",
          "模型服务器过载或正在重启（HTTP {status}）。请等几秒后重新发送消息。"),
    entry(ServerTooSlow, r"has not begun its answer after (?P<minutes>\d+) minutes",
          "模型服务器在 {minutes} 分钟后仍未开始回答（GLM1M_FIRST_TOKEN_TIMEOUT_S），glm1m 已停止等待。"
          "请换用更短的提示或文档，或调高 GLM1M_FIRST_TOKEN_TIMEOUT_S。"),
    entry(ServerError, r"refused glm1m's API key",
          "模型服务器拒绝了 glm1m 的 API 密钥。请用 `glm1m up` 同时启动两者，"
          "或把 GLM1M_API_KEY 设为服务器启动时使用的密钥。"),
    entry(ContextTooLong,
          r"This conversation is (?P<tokens>[\d,]+) tokens long and the model serves (?P<max>[\d,]+)",
          "这段对话已有 {tokens} 个词元，而模型只支持 {max} 个，放不下回答。请新建对话（顶部的铅笔图标），"
          "或发送更短的消息。"),
    entry(ContextTooLong, r"This conversation no longer fits the model's context window\.",
          "这段对话已超出模型的上下文窗口。请新建对话，或发送更短的消息。"),
    entry(CsvError, r"(?P<name>.+) has a header but no rows",
          "{name} 只有表头，没有数据行：没有可翻译的内容。"),
    entry(CsvError, r"(?P<name>.+) is empty: there is nothing to translate\.",
          "{name} 是空文件：没有可翻译的内容。"),
    entry(CsvError, r"(?P<name>.+) has no header row and no data\.", "{name} 没有表头也没有数据。"),
    entry(CsvError, r"(?P<name>.+) is neither UTF-8 nor GBK/GB18030 text",
          "{name} 既不是 UTF-8 也不是 GBK/GB18030 文本，也不是 glm1m 能识别的其他编码。请在表格软件中另存为 "
          "“CSV UTF-8”后再上传。"),
    entry(CsvError, r"(?P<name>.+) row (?P<row>\d+) has (?P<fields>\d+) fields but its header "
                    r"\(row (?P<header>\d+)\) has (?P<width>\d+)",
          "{name} 第 {row} 行有 {fields} 个字段，而表头（第 {header} 行）只有 {width} 个。请修正这一行"
          "（含分隔符的单元格需要用引号括起来），或在表格软件中重新保存该文件。"),
    entry(UserFacingError, r"(?P<name>.+) reads as (?P<encoding>.+?) text, but byte (?P<byte>\d+) is "
                           r"not (?P=encoding)(?: \(line (?P<line>\d+)\))?:",
          "{name} 按 {encoding} 读取，但第 {byte} 个字节不是 {encoding}：文件已损坏或混用了多种编码。"
          "请另存为 UTF-8 后再上传。"),
    entry(JobAlreadyRunning, r"(?P<name>.+) is already being translated with these settings",
          "{name} 正在以相同设置翻译（在另一个标签页、窗口或终端中）。请等那次运行结束或在那里停止它，"
          "然后再试；已完成的行会保留。"),
    entry(DocumentError, r"(?P<name>.+) is not a PDF \(its content is not PDF",
          "{name} 不是 PDF（无论文件名如何，其内容不是 PDF）。请在生成它的程序中导出或打印为 PDF，再上传。"),
    entry(DocumentError, r"(?P<name>.+) is password-protected",
          "{name} 受密码保护，无法读取文字。请去掉密码（用密码打开后另存或打印一份无密码的副本）再上传。"),
    entry(DocumentError, r"(?P<name>.+) is empty \(0 bytes\)\.",
          "{name} 是空文件（0 字节）。请重新上传；如果它在你的电脑上也是空的，请重新导出或下载。"),
    entry(DocumentError, r"(?P<name>.+) has no text that can be extracted \(it may hold only images\)",
          "{name} 中没有可提取的文字（可能只有图片）。请把它导出为 PDF 再上传："
          "没有文字的页面会用 OCR 读取。"),
    entry(DocumentError, r"(?P<name>.+) has no text that can be extracted",
          "{name} 中没有可提取的文字：它可能是扫描件或由图片组成。请让 glm1m 用 OCR 读取它"
          "（`--ocr auto`，网页应用设置 GLM1M_OCR=auto）。"),
    entry(DocumentError, r"(?P<name>.+) has no text on (?:its only page|any of its [\d,]+ pages): "
                         r"(?:it is|they are) blank",
          "{name} 没有文字：页面是空白的，没有可读的内容。请确认这是你要上传的文件。"),
    entry(DocumentError, r"(?P<name>.+) is damaged or incomplete \(pages? (?P<pages>[\d,– ]+) "
                         r"cannot be read\)",
          "{name} 已损坏或不完整（第 {pages} 页无法读取），因此无法读取其文字。请重新下载或导出后再上传。"),
    entry(DocumentError, r"(?P<name>.+) is damaged or incomplete, so its text cannot be read",
          "{name} 已损坏或不完整，无法读取其文字。请重新下载或导出（下载中断会截断 PDF）后再上传。"),
    entry(DocumentError, r"(?P<name>.+) is damaged: its list of pages is lost",
          "{name} 已损坏：其页面列表丢失，找不到任何页面。请重新下载或导出后再上传。"),
    entry(DocumentError, r"(?P<name>.+) cannot be opened as (?P<kind>\w+) \(it is damaged",
          "{name} 无法作为 {kind} 打开（文件已损坏，或内容与文件名不符）。"
          "请在生成它的程序中重新保存后再上传。"),
    entry(DocumentError, r"(?P<name>.+) is protected with a password or DRM",
          "{name} 受密码或 DRM 保护，无法读取文字。请上传一份未加保护的副本。"),
    entry(DocumentError, r"(?P<name>.+) is not a text file \(it holds NUL bytes",
          "{name} 不是文本文件（含有 NUL 字节，程序和图片才会这样）。请上传文档本身：PDF、DOCX、EPUB、HTML、"
          "Markdown 或文本文件。"),
    entry(DocumentError, r"Reading scanned pages needs Tesseract OCR, which is not installed\.",
          "读取扫描页需要 Tesseract OCR，但它没有安装。请安装 Tesseract 及其语言数据（Debian/Ubuntu："
          "`sudo apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim "
          "tesseract-ocr-chi-tra`，"
          "或 `make system-tools`），或把 GLM1M_OCR_TESSDATA 设为存放 .traineddata 文件的文件夹。"),
    entry(ShelfFull, r"\((?P<used>[\d.,]+ [KM]B) of (?P<cap>[\d.,]+ [KM]B) kept; (?P<name>.+) "
          r"needs (?P<needed>[\d.,]+ [KM]B)\).*?`(?P<command>glm1m shelf rm [^`]+)` "
          r"\(the largest: (?P<largest>.*)\), or",
          "已读文档的文档架已满（已保存 {used}，上限 {cap}；{name} 需要 {needed}），"
          "因此 {name} 已读取但未保存。请删除不再需要的文档：`{command}`（最大的：{largest}），"
          "或调高 GLM1M_SHELF_MAX_MB。"),
    entry(CsvError, r"(?P<name>.+) is protected with a password \(encrypted\)",
          "{name} 受密码保护（已加密），glm1m 无法读取。请在 Excel 中去掉密码（文件 > 信息 > 保护工作簿），"
          "保存后再附上。"),
    entry(CsvError, r"(?P<name>.+) is an old-style Excel 97-2003 workbook \(\.xls\)",
          "{name} 是旧式 Excel 97-2003 工作簿（.xls），glm1m 无法写回。"
          "请另存为 .xlsx（Excel 工作簿）后再附上。"),
    entry(CsvError, r"(?P<name>.+) is not a readable \.xlsx workbook",
          "{name} 不是可读取的 .xlsx 工作簿（已损坏、不完整或是其他类型的文件）。"
          "请在 Excel 中重新另存为 .xlsx。"),
)

LEADS = (  # most specific class first
    (ServerUnavailable, "模型服务器无法访问"), (ServerBusy, "模型服务器繁忙"),
    (ServerTooSlow, "模型服务器太慢"), (ContextTooLong, "内容超出上下文"),
    (CsvError, "表格无法使用"), (DocumentError, "文档无法使用"), (JobAlreadyRunning, "任务已在运行"),
    (ServerError, "模型服务器出错"), (UserFacingError, "出错了"),
)


def in_chinese(error: UserFacingError) -> str:
    """The sentence for `error` in Chinese: its catalog entry, else a Chinese lead and the English."""
    text = str(error)
    for item in CATALOG:
        if isinstance(error, item.kind) and (found := item.english.search(text)):
            return item.chinese.format(**found.groupdict())
    lead = next(words for kind, words in LEADS if isinstance(error, kind))
    return f"{lead}：{text}"
