"""The core's sentences: every UserFacingError raised with an id, and the words they take as fields.
(English, Chinese) per id; see glm1m/catalog/__init__.py for the convention."""

from __future__ import annotations

CORE: dict[str, tuple[str | tuple[str, str], str]] = {
    "list_sep": (", ", "、"),  # between the items of a list field (glm1m.catalog.render)
    # What an error without an id is led by on a Chinese page (its English follows): glm1m.errors.
    "lead_error": ("Error", "出错了"),
    "lead_server_unavailable": ("The model server cannot be reached", "模型服务器无法访问"),
    "lead_server_busy": ("The model server is busy", "模型服务器繁忙"),
    "lead_server_too_slow": ("The model server is too slow", "模型服务器太慢"),
    "lead_context_too_long": ("Too long for the context", "内容超出上下文"),
    "lead_server_error": ("The model server failed", "模型服务器出错"),
    "lead_document": ("The document cannot be used", "文档无法使用"),
    "lead_table": ("The table cannot be used", "表格无法使用"),
    "lead_job_running": ("The job is running already", "任务已在运行"),
    "lead_account": ("Accounts", "账户"),
    "lead_secret": ("A secret file", "密钥文件"),
    "lead_history": ("The history database", "历史数据库"),
    "lead_plan": ("The GPUs cannot hold this", "GPU 放不下"),
    "lead_start": ("Starting failed", "启动失败"),
    "lead_settings": ("A setting cannot be used", "设置无法使用"),
    # The model server (glm1m/llm.py, glm1m/chat.py).
    "server_not_answering": (
        "The model server at {url} is not answering. Start it with `make run` or `glm1m serve` (or "
        "wait until it has finished starting), then send your message again.",
        "模型服务器（{url}）没有响应。请用 `make run` 或 `glm1m serve` 启动它（或等它启动完毕），"
        "然后重新发送消息。"),
    "server_dropped": (
        "The model server stopped in the middle of the answer. The part shown so far is kept; send "
        "your message again once the server is back.",
        "模型服务器在回答中途停止了。已显示的部分会保留；服务器恢复后请重新发送消息。"),
    "server_health_lost": (
        "The model server at {url} stopped answering its health check while it was reading the "
        "prompt. Check that it is still running (or restart it with `glm1m serve`), then send your "
        "message again.",
        "模型服务器（{url}）在读取提示时停止响应健康检查。请确认它仍在运行（或用 `glm1m serve` 重启），"
        "然后重新发送消息。"),
    "server_too_slow": (
        "The model server has not begun its answer after {minutes:.0f} minutes "
        "(GLM1M_FIRST_TOKEN_TIMEOUT_S), so glm1m stopped waiting. Try a shorter prompt or document, "
        "or raise GLM1M_FIRST_TOKEN_TIMEOUT_S.",
        "模型服务器在 {minutes:.0f} 分钟后仍未开始回答（GLM1M_FIRST_TOKEN_TIMEOUT_S），glm1m 已停止等待。"
        "请换用更短的提示或文档，或调高 GLM1M_FIRST_TOKEN_TIMEOUT_S。"),
    "server_key_refused": (
        "The model server at {url} refused glm1m's API key. Start both with `glm1m up`, or set "
        "GLM1M_API_KEY to the key the server was started with (`glm1m serve` keeps it in {key_file}).",
        "模型服务器（{url}）拒绝了 glm1m 的 API 密钥。请用 `glm1m up` 同时启动两者，"
        "或把 GLM1M_API_KEY 设为服务器启动时使用的密钥（`glm1m serve` 把它保存在 {key_file}）。"),
    "server_busy": (
        "The model server is overloaded or restarting (HTTP {status}). Wait a few seconds and send "
        "your message again.",
        "模型服务器过载或正在重启（HTTP {status}）。请等几秒后重新发送消息。"),
    "context_too_long": (
        "This conversation is {tokens:,} tokens long and the model serves {max:,}, so no answer "
        "fits. Start a new chat (the pencil icon at the top), or send a shorter message.",
        "这段对话已有 {tokens:,} 个词元，而模型只支持 {max:,} 个，放不下回答。请新建对话（顶部的铅笔图标），"
        "或发送更短的消息。"),
    "context_no_longer_fits": (
        "This conversation no longer fits the model's context window. Start a new chat, or send a "
        "shorter message.",
        "这段对话已超出模型的上下文窗口。请新建对话，或发送更短的消息。"),
    # Tables (glm1m/translation/).
    "table_empty": ("{name} is empty: there is nothing to translate.", "{name} 是空文件：没有可翻译的内容。"),
    "table_header_only": ("{name} has a header but no rows: there is nothing to translate.",
                          "{name} 只有表头，没有数据行：没有可翻译的内容。"),
    "table_no_header": ("{name} has no header row and no data.", "{name} 没有表头也没有数据。"),
    "table_row_width": (
        "{name} row {row} has {fields} fields but its header (row {header}) has {width}: fix that row "
        "(a cell holding a {delimiter} needs quotes around it) or save the file again from your "
        "spreadsheet.",
        "{name} 第 {row} 行有 {fields} 个字段，而表头（第 {header} 行）只有 {width} 个。请修正这一行"
        "（含{delimiter}的单元格需要用引号括起来），或在表格软件中重新保存该文件。"),
    "delimiter_comma": ("comma", "逗号"),
    "delimiter_semicolon": ("semicolon", "分号"),
    "delimiter_tab": ("tab", "制表符"),
    "delimiter_'|'": ("'|'", "“|”"),
    "job_running": (
        "{name} is already being translated with these settings (in another tab, window or "
        "terminal). Wait for that run to finish, or stop it there, then try again; its finished rows "
        "are kept.",
        "{name} 正在以相同设置翻译（在另一个标签页、窗口或终端中）。请等那次运行结束或在那里停止它，"
        "然后再试；已完成的行会保留。"),
    "row_not_reached": ("not translated: the job stopped before this row; run it again to continue",
                        "未翻译：任务在这一行之前就停止了；再次运行即可继续"),
    "xlsx_encrypted": (
        "{name} is protected with a password (encrypted), so glm1m cannot read it. Open it in Excel, "
        "remove the password (File > Info > Protect Workbook), save, and attach it again.",
        "{name} 受密码保护（已加密），glm1m 无法读取。请在 Excel 中去掉密码（文件 > 信息 > 保护工作簿），"
        "保存后再附上。"),
    "xlsx_old": (
        "{name} is an old-style Excel 97-2003 workbook (.xls), which glm1m does not write back. Save "
        "it as .xlsx (Excel Workbook) and attach that.",
        "{name} 是旧式 Excel 97-2003 工作簿（.xls），glm1m 无法写回。"
        "请另存为 .xlsx（Excel 工作簿）后再附上。"),
    "xlsx_unreadable": (
        "{name} is not a readable .xlsx workbook (damaged, cut short, or another kind of file). Save "
        "it again from Excel as .xlsx.",
        "{name} 不是可读取的 .xlsx 工作簿（已损坏、不完整或是其他类型的文件）。"
        "请在 Excel 中重新另存为 .xlsx。"),
    # Text encodings (glm1m/encoding.py); `advice` is one of the advice_* below.
    "encoding_cut_short": (
        "{name} is {encoding} text cut short inside its last character (byte {byte}). Download or "
        "export it again.",
        "{name} 是 {encoding} 文本，但在最后一个字符中间被截断（第 {byte} 个字节）。请重新下载或导出。"),
    "encoding_bad_byte": (
        "{name} reads as {encoding} text, but byte {byte} is not {encoding}: the file is damaged or "
        "mixes encodings. {advice}",
        "{name} 按 {encoding} 读取，但第 {byte} 个字节不是 {encoding}：文件已损坏或混用了多种编码。{advice}"),
    "encoding_bad_byte_line": (
        "{name} reads as {encoding} text, but byte {byte} is not {encoding} (line {line}): the file "
        "is damaged or mixes encodings. {advice}",
        "{name} 按 {encoding} 读取，但第 {byte} 个字节（第 {line} 行）不是 {encoding}：文件已损坏或混用了"
        "多种编码。{advice}"),
    "encoding_unknown": (
        "{name} is neither UTF-8 nor GBK/GB18030 text, nor in any other encoding glm1m recognises "
        "(byte {byte} is not UTF-8). {advice}",
        "{name} 既不是 UTF-8 也不是 GBK/GB18030 文本，也不是 glm1m 能识别的其他编码（第 {byte} 个字节不是 "
        "UTF-8）。{advice}"),
    "advice_csv_utf8": ("Save it again as 'CSV UTF-8' from your spreadsheet.",
                        "请在表格软件中另存为“CSV UTF-8”后再上传。"),
    "advice_text_utf8": ("Save it again as UTF-8 text (in your editor: Save As, encoding UTF-8) and "
                         "upload that.", "请另存为 UTF-8 文本（在编辑器中：另存为，编码选 UTF-8）后再上传。"),
    "advice_html_utf8": ("Save it again as UTF-8 (in your editor: Save As, encoding UTF-8) and upload "
                         "that.", "请另存为 UTF-8（在编辑器中：另存为，编码选 UTF-8）后再上传。"),
    # Documents (glm1m/documents/).
    "doc_empty": (
        "{name} is empty (0 bytes). Upload the file again; if it is empty on your computer too, "
        "export or download it again.",
        "{name} 是空文件（0 字节）。请重新上传；如果它在你的电脑上也是空的，请重新导出或下载。"),
    "doc_too_large": (
        "{name} is {mb:.1f} MB, over the {limit:g} MB limit for documents. Split it into smaller files "
        "and upload them one at a time.",
        "{name} 有 {mb:.1f} MB，超过了文档的 {limit:g} MB 上限。请拆分成较小的文件，逐个上传。"),
    "doc_too_large_paged": (
        "{name} is {mb:.1f} MB, over the {limit:g} MB limit for {what}. Split it into smaller files (or "
        "compress its images) and upload them one at a time.",
        "{name} 有 {mb:.1f} MB，超过了{what}的 {limit:g} MB 上限。"
        "请拆分成较小的文件（或压缩其中的图片），逐个上传。"),
    "files_pdf": ("PDFs", " PDF 文件"),
    "files_of": ("{kind} files", " {kind} 文件"),
    "doc_too_many_pages": (
        "{name} has {pages:,} pages, over the {limit:,}-page limit. Split it into parts of at most "
        "{limit:,} pages and upload them one at a time.",
        "{name} 有 {pages:,} 页，超过了 {limit:,} 页的上限。请拆分成每份最多 {limit:,} 页，逐个上传。"),
    "doc_read_stopped": ("Stopped reading {name}; attach it again to start over.",
                    "已停止读取 {name}；重新附上即可从头开始。"),
    "doc_read_stopped_ocr": (
        "Stopped reading {name} ({done:,} of {total:,} scanned pages were read); attach it again to "
        "start over.",
        "已停止读取 {name}（已识别 {done:,} / {total:,} 个扫描页）；重新附上即可从头开始。"),
    "doc_blank_lines": (
        "{name} has no text (only blank lines). Upload the file again; if it is empty on your computer "
        "too, save it again from your editor.",
        "{name} 没有文字（只有空行）。请重新上传；如果它在你的电脑上也是空的，请在编辑器中重新保存。"),
    "doc_not_pdf": (
        "{name} is not a PDF (its content is not PDF, whatever its name says). Open it in the program "
        "that made it and export or print it as PDF, then upload that.",
        "{name} 不是 PDF（无论文件名如何，其内容不是 PDF）。请在生成它的程序中导出或打印为 PDF，再上传。"),
    "doc_password": (
        "{name} is password-protected, so its text cannot be read. Remove the password (open it with "
        "the password and save or print a copy without one) and upload again.",
        "{name} 受密码保护，无法读取文字。请去掉密码（用密码打开后另存或打印一份无密码的副本）再上传。"),
    "doc_page_list_lost": (
        "{name} is damaged: its list of pages is lost, so no page can be found. Download or export it "
        "again and upload the new copy.",
        "{name} 已损坏：其页面列表丢失，找不到任何页面。请重新下载或导出后再上传。"),
    "doc_no_pages": (
        "{name} has no pages: there is nothing to read. Export or download it again and upload the new "
        "copy.",
        "{name} 没有页面：没有可读的内容。请重新导出或下载后再上传。"),
    "doc_damaged": (
        "{name} is damaged or incomplete, so its text cannot be read. Download or export it again (an "
        "interrupted download cuts a PDF short) and upload the new copy.",
        "{name} 已损坏或不完整，无法读取其文字。请重新下载或导出（下载中断会截断 PDF）后再上传。"),
    "doc_damaged_pages": (
        ("{name} is damaged or incomplete (page {pages} cannot be read), so its text cannot be read. "
         "Download or export it again (an interrupted download cuts a PDF short) and upload the new copy.",
         "{name} is damaged or incomplete (pages {pages} cannot be read), so its text cannot be read. "
         "Download or export it again (an interrupted download cuts a PDF short) and upload the new copy."),
        "{name} 已损坏或不完整（第 {pages} 页无法读取），因此无法读取其文字。"
        "请重新下载或导出（下载中断会截断 PDF）后再上传。"),
    "doc_no_text_ocr": (
        ("{name} has no text on its only page, not even with OCR ({languages}): its pages hold pictures "
         "without words, or their text is too faint or small to read. If it is a scan, scan it again at "
         "300 dpi and upload that.",
         "{name} has no text on any of its {count:,} pages, not even with OCR ({languages}): its pages "
         "hold pictures without words, or their text is too faint or small to read. If it is a scan, "
         "scan it again at 300 dpi and upload that."),
        "{name} 的 {count:,} 页中没有文字，用 OCR（{languages}）"
        "也读不出：页面上是没有文字的图片，或文字太淡、"
        "太小而无法识别。如果是扫描件，请以 300 dpi 重新扫描后再上传。"),
    "doc_scanned": (
        ("{name} has no text that can be extracted on its only page: it is probably scanned or made of "
         "images. Let glm1m read it with OCR (`--ocr auto`, or GLM1M_OCR=auto for the app).",
         "{name} has no text that can be extracted on any of its {count:,} pages: it is probably scanned "
         "or made of images. Let glm1m read it with OCR (`--ocr auto`, or GLM1M_OCR=auto for the app)."),
        "{name} 的 {count:,} 页中没有可提取的文字：它可能是扫描件或由图片组成。请让 glm1m 用 OCR 读取它"
        "（`--ocr auto`，网页应用设置 GLM1M_OCR=auto）。"),
    "doc_blank": (
        ("{name} has no text on its only page: it is blank, with nothing on it to read. Check that this "
         "is the file you meant to upload.",
         "{name} has no text on any of its {count:,} pages: they are blank, with nothing on them to "
         "read. Check that this is the file you meant to upload."),
        "{name} 没有文字：共 {count:,} 页，都是空白的，没有可读的内容。请确认这是你要上传的文件。"),
    "doc_cannot_open": (
        "{name} cannot be opened as {kind} (it is damaged, or its content is not what its name says). "
        "Open it in the program that made it, save it again, and upload that.",
        "{name} 无法作为 {kind} 打开（文件已损坏，或内容与文件名不符）。"
        "请在生成它的程序中重新保存后再上传。"),
    "doc_drm": ("{name} is protected with a password or DRM, so its text cannot be read. Upload a copy "
                "without protection.", "{name} 受密码或 DRM 保护，无法读取文字。请上传一份未加保护的副本。"),
    "doc_images_only": (
        "{name} has no text that can be extracted (it may hold only images). Export it as PDF and "
        "upload that: pages without text are then read with OCR.",
        "{name} 中没有可提取的文字（可能只有图片）。请把它导出为 PDF 再上传：没有文字的页面会用 OCR 读取。"),
    "doc_not_text": (
        "{name} is not a text file (it holds NUL bytes, as programs and images do). Upload the document "
        "itself: a PDF, DOCX, EPUB, HTML, Markdown or text file.",
        "{name} 不是文本文件（含有 NUL 字节，程序和图片才会这样）。请上传文档本身：PDF、DOCX、EPUB、HTML、"
        "Markdown 或文本文件。"),
    "ocr_missing": ("Reading scanned pages needs Tesseract OCR, which is not installed. {install}",
                    "读取扫描页需要 Tesseract OCR，但它没有安装。{install}"),
    "ocr_languages_missing": (
        "Reading scanned pages needs Tesseract's language data for {languages}, which is not in "
        "{folder}. {install}",
        "读取扫描页需要 Tesseract 的 {languages} 语言数据，但 {folder} 中没有。{install}"),
    "ocr_cannot_start": (
        "Tesseract could not start to read {name}: its language data ({languages} in {folder}) cannot "
        "be loaded ({error}). {install}",
        "Tesseract 无法开始读取 {name}：它的语言数据（{folder} 中的 {languages}）"
        "无法加载（{error}）。{install}"),
    "ocr_install": (
        "Install Tesseract with its language data (Debian/Ubuntu: `sudo apt-get install tesseract-ocr "
        "tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-chi-tra`, or `make system-tools`), or "
        "set GLM1M_OCR_TESSDATA to the folder holding the .traineddata files.",
        "请安装 Tesseract 及其语言数据（Debian/Ubuntu：`sudo apt-get install tesseract-ocr "
        "tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-chi-tra`，或 `make system-tools`），"
        "或把 GLM1M_OCR_TESSDATA 设为存放 .traineddata 文件的文件夹。"),
    "shelf_full": (
        "The shelf of read documents is full ({used} of {cap} kept; {name} needs {needed}), so {name} is "
        "read but not kept. Delete documents you no longer need with `{command}` (the largest: "
        "{largest}), or raise GLM1M_SHELF_MAX_MB.",
        "已读文档的文档架已满（已保存 {used}，上限 {cap}；{name} 需要 {needed}），"
        "因此 {name} 已读取但未保存。"
        "请删除不再需要的文档：`{command}`（最大的：{largest}），或调高 GLM1M_SHELF_MAX_MB。"),
    "shelf_nothing_yet": ("nothing yet", "还没有"),
}
