"""The web page's own sentences (chainlit_app/): its welcome, settings, progress, documents, shelf,
translation and upload notes. (English, Chinese) per id; see glm1m/catalog/__init__.py for the
convention. The core's sentences are in core.py."""

from __future__ import annotations

PAGE: dict[str, tuple[str | tuple[str, str], str]] = {
    "welcome": (
        "**glm1m** reads long documents with GLM-4-9B-Chat-1M.\n"
        "- **Ask** anything in Chinese or English.\n"
        "- **Attach a document** with the paperclip (PDF, DOCX, EPUB, MOBI, FB2, XPS, TXT, Markdown, "
        "HTML, or scanned pages read by OCR) to summarise it or ask about it; answers cite the pages.\n"
        "- **Attach a spreadsheet** (CSV or XLSX) to translate a column row by row into "
        "{target} (⚙ settings); the file comes back with a translation column.\n"
        "- The stop button ends any answer or job; what is finished is kept. Closing the tab stops "
        "a running job too ({grace} s later, so a page that only reconnects goes on).",
        "**glm1m** 用 GLM-4-9B-Chat-1M 阅读长文档。\n"
        "- **提问**：中文或英文都可以。\n"
        "- **用回形针附上文档**（PDF、DOCX、EPUB、MOBI、FB2、XPS、TXT、Markdown、HTML，或经 OCR "
        "识别的扫描页）：总结或就它提问，回答会注明页码。\n"
        "- **附上表格**（CSV 或 XLSX）：把其中一列逐行翻译成{target}（⚙ 设置中可改），"
        "返回的文件多一列译文。\n"
        "- 停止按钮可随时结束回答或任务，已完成的部分会保留。关闭标签页也会停止正在运行的任务"
        "（{grace} 秒后，只是重新连接的页面不受影响）。"),
    "demo_banner": (
        "**Demo mode.** The model server runs a tiny model with *random weights*: its answers are "
        "noise. Everything else — streaming, stop, documents, translation — works as with the real "
        "GLM-4-9B-Chat-1M. Serve the real model on a GPU to get real answers (the Readme button "
        "at the top of the page says how).",
        "**演示模式。** 模型服务器运行的是一个*随机权重*的微型模型：它的回答没有意义。其余一切——"
        "流式输出、停止、文档、翻译——都与真正的 GLM-4-9B-Chat-1M 相同。在 GPU 上部署真实模型即可"
        "得到真实的回答（页面顶部的“说明”按钮里有做法）。"),
    "attached": ("Attached: {names}", "附件：{names}"),
    "attached_lost": ("Attached: a file from before “New Chat” (it did not arrive)",
                      "附件：“新建对话”之前附上的文件（未收到）"),
    "files_lost": (
        "The file in this message was attached before “New Chat”, and a new chat starts without the "
        "files of the one before: it did not arrive, and nothing was sent to the model. Attach the "
        "file again (the paperclip), then send.",
        "此消息中的文件是在“新建对话”之前附上的，新对话不会带上之前的文件：文件没有收到，"
        "也没有发送给模型。请用回形针重新附上文件后再发送。"),
    "empty_message": (
        "This message has no text and no file, so nothing was sent to the model. Type a question, or "
        "attach a document or a spreadsheet.",
        "此消息没有文字也没有文件，因此没有发送给模型。请输入问题，或附上文档或表格。"),
    "choice_made": ("**Selected:** {label}", "**已选择：** {label}"),
    "choice_none": ("Timed out: no action was taken", "已超时：未作选择"),
    "choice_timeout": ("No choice was made in time, so the first one is taken: **{label}**.",
                       "未及时选择，因此采用第一个选项：**{label}**。"),
    "label_system_prompt": ("System prompt", "系统提示词"),
    "shelf_change_stopped": ("Stopped while counting the chat's documents with {name}: the chat keeps the "
                             "documents it had.",
                             "统计包含 {name} 的对话文档时已停止：对话保留原有的文档。"),
    # The English one is Settings.system_prompt's default (tests/unit/test_settings_panel.py checks).
    "default_system_prompt": ("You are a helpful assistant. Answer in the user's language.",
                              "你是一个乐于助人的助手。请用用户所用的语言回答。"),
    "label_temperature": ("Temperature", "温度"),
    "label_max_tokens": ("Max new tokens", "最大新词元数"),
    "label_target": ("Translate spreadsheets into", "表格翻译的目标语言"),
    "label_source": ("Spreadsheet source language", "表格的源语言"),
    # The target languages offered, as a sentence names them (chainlit_app/i18n.target_words).
    "language_English": ("English", "英文"),
    "language_简体中文": ("Simplified Chinese", "简体中文"),
    "language_繁體中文": ("Traditional Chinese", "繁体中文"),
    "auto_source": ("(detect)", "（自动检测）"),
    # One help line under each setting in the ⚙ panel.
    "help_system_prompt": (
        "What the model is told before every chat answer: its role and manner (questions about a "
        "document and translations have their own). A change applies from the next answer.",
        "每次聊天回答前告诉模型的话：它的角色和风格（文档问答和表格翻译另有指示）。修改后从下一个回答起生效。"),
    "help_temperature": (
        "How varied the wording is: 0 always takes the likeliest words (best for facts and "
        "citations); higher is freer and less exact.",
        "措辞的随机程度：0 总是选最可能的词（适合事实与引用）；越高越自由，也越不精确。"),
    "help_max_tokens": (
        "The longest answer, in tokens (about ¾ of an English word, or one or two Chinese "
        "characters, each). An answer that reaches it is cut off, and the page says so.",
        "回答的最大长度，以词元计（一个词元约为 ¾ 个英文单词，或一两个汉字）。"
        "达到上限的回答会被截断，页面会注明。"),
    "help_target": (
        "The language an attached CSV or XLSX is translated into; the file comes back with the "
        "translation beside each chosen column.",
        "附上的 CSV 或 XLSX 表格要翻译成的语言；返回的文件在所选列旁边多出译文。"),
    "help_source": (
        "The language of the spreadsheet's text. (detect) lets the model tell it for each cell; "
        "name it when the text is short or mixed.",
        "表格文字的原语言。（自动检测）由模型逐格判断；文字很短或夹杂多种语言时，最好明确指定。"),
    "unsupported": (
        "glm1m reads documents (to summarise or ask about them) and spreadsheets (to translate a "
        "column). Attach one of those, or type a question.",
        "glm1m 可以读取文档（总结或提问）和表格（翻译其中一列）。请附上这类文件，或直接输入问题。"),
    # Translation.
    "tr_head": ("Reading **{name}** {how}; translating {columns} from {source} into {target}{glossary}.",
                "读取 **{name}**（{how}）；把{columns}从{source}翻译成{target}{glossary}。"),
    "tr_encoding": ("as {encoding}", "编码 {encoding}"),
    "tr_sheet": ("as an Excel workbook, sheet '{sheet}'", "Excel 工作簿，工作表“{sheet}”"),
    "tr_column": ("column **{columns}**", " **{columns}** 列"),
    "tr_columns": ("columns **{columns}**", " **{columns}** 列"),
    "tr_detected": ("the language the model detects", "模型识别出的语言"),
    "tr_glossary": (" with {count} glossary terms from {name}", "，使用 {name} 中的 {count} 个术语"),
    "tr_tab": ("Keep this tab open: closing it stops the job after {grace} s. The finished rows are "
               "kept; attaching the same file again in this chat continues from them.",
               "请保持此标签页打开：关闭后 {grace} 秒任务即停止。已翻译的行会保留；在此对话中再次附上同一"
               "文件即可从中断处继续。"),
    "tr_starting": ("Starting …", "正在开始 …"),
    "tr_done": ("Finished: {line} in {seconds}{rate}.", "已完成：{line}，用时 {seconds}{rate}。"),
    "tr_stopped_at": ("Stopped: {line} after {seconds}{rate}.", "已停止：{line}，用时 {seconds}{rate}。"),
    "tr_rate": (" ({rate:.1f} {unit}/s)", "（每秒 {rate:.1f} {unit}）"),
    "tr_rate_tokens": (" ({rate:.1f} {unit}/s; {tokens:,} tokens, {tokens_rate:,.0f} tokens/s)",
                       "（每秒 {rate:.1f} {unit}；共生成 {tokens:,} 个词元，每秒 {tokens_rate:,.0f} 个）"),
    "tr_failed_at": ("Ended by an error (see below) after {seconds}.", "因错误结束（见下方），"
                                                                       "用时 {seconds}。"),
    "tr_stopped": ("Stopped. The rows finished so far are in the file below; the others are marked.",
                   "已停止。已完成的行在下面的文件中；其余的行已标注。"),
    "tr_stopped_none": ("Stopped after {seconds}, before any {unit} was translated: there is no file to "
                        "hand over. Attach the file again to start.",
                        "已停止，用时 {seconds}；还没有翻译完任何{unit}，所以没有文件可下载。"
                        "再次附上文件即可重新开始。"),
    "tr_layout": ("{delimiter}-separated", "{delimiter}分隔"),
    "tr_header_row": ("the header is row {row}; {above} row(s) above it (a title, comments) left out",
                      "表头在第 {row} 行，其上 {above} 行（标题、注释）未读取"),
    "tr_continuing": ("Continuing: {done:,} of {total:,} {unit} were done before; translating the other "
                      "{left:,}.",
                      "继续上次的任务：此前已完成 {done:,} / {total:,} {unit}，"
                      "现在翻译其余 {left:,} {unit}。"),
    "tr_done_before": ("**{name}** was translated already in this chat, with these settings: all "
                       "{total:,} {unit}. Take that result, or translate it again?",
                       "**{name}** 已在此对话中按相同设置翻译过：全部 {total:,} {unit}。"
                       "使用那次的结果，还是重新翻译？"),
    "tr_take_result": ("The result", "使用结果"),
    "tr_again": ("Translate again", "重新翻译"),
    "tr_result_before": ("The translation of **{name}** made before: {total:,} of {total:,} {unit} "
                         "translated.",
                         "之前完成的 **{name}** 译文：已翻译 {total:,} / {total:,} {unit}。"),
    "summary": ("{translated:,} of {total:,} {unit} translated", "已翻译 {translated:,} / {total:,} {unit}"),
    "summary_resumed": (" ({resumed:,} by an earlier run, {new:,} by this one)",
                        "（此前已完成 {resumed:,}，本次 {new:,}）"),
    "summary_failed": (", {failed:,} failed (see the translation_error column)",
                       "，{failed:,} 个失败（见 translation_error 列）"),
    "summary_not_reached": (", {count:,} not reached (run again to continue)",
                            "，{count:,} 个未处理（再次运行即可继续）"),
    # Documents.
    "doc_reading": ("Reading **{name}** …", "正在读取 **{name}** …"),
    "doc_ask_now": ("Ask your question: it goes to these documents.", "请提问：问题会发给这些文档。"),
    "doc_taken_out": ("**{label}** ({name}) is out of this chat.", "**{label}**（{name}）已移出此对话。"),
    "doc_taken_out_all": ("**{label}** ({name}) is out of this chat, which has no documents now: "
                          "messages go to the chat.",
                          "**{label}**（{name}）已移出此对话，此对话现在没有文档：消息将作为普通聊天发送。"),
    # The shelf on the page (shelf_panel.py).
    "shelf_command": ("Your shelf of read documents: add one to this chat, take one out, delete one",
                      "你的文档架（已读过的文档）：加入此对话、移出此对话或删除"),
    "shelf_chat_head": ("**This chat's documents:**", "**此对话的文档：**"),
    "shelf_chat_none": ("This chat has no documents yet.", "此对话还没有文档。"),
    "shelf_head": ("**Your shelf** ({count:,} documents, {used:,.1f} of {cap:,.0f} MB):",
                   "**你的文档架**（{count:,} 份文档，已用 {used:,.1f} / {cap:,.0f} MB）："),
    "shelf_empty": ("Empty: documents you attach are kept here, read once.",
                    "空：你附上的文档会保存在这里，只需读取一次。"),
    "shelf_entry": ("{name} — {held}, {tokens}, added {added}", "{name} — {held}，{tokens}，{added} 加入"),
    "shelf_tokens": ("{tokens:,} tokens", "{tokens:,} 个词元"),
    "shelf_not_counted": ("not counted for this server yet", "尚未按此服务器统计词元"),
    "shelf_add": ("Add {name}", "加入 {name}"),
    "shelf_delete": ("Delete {name} from the shelf", "从文档架删除 {name}"),
    "shelf_take_out": ("Take {label} ({name}) out of this chat", "把 {label}（{name}）移出此对话"),
    "shelf_gone": ("That document is no longer on your shelf (deleted meanwhile). Attach the file "
                   "again to read it.", "该文档已不在你的文档架上（已被删除）。请重新附上文件读取。"),
    "shelf_not_in_chat": ("This chat has no document {label} any more.", "此对话已没有文档 {label}。"),
    "shelf_deleted": ("Deleted **{name}** from your shelf; chats that hold it keep its text.",
                      "已从文档架删除 **{name}**；包含它的对话仍保留其文本。"),
    "doc_counting": ("Counting tokens of **{name}** …", "正在统计 **{name}** 的词元 …"),
    "doc_shelved": ("**{name}** is on the shelf (read {added}): not read again.",
                    "**{name}** 已在文档架上（{added} 读取）：无需再次读取。"),
    # A damaged PDF read in part (pages.lost_note's sentences; the English is the same, tested).
    "doc_pages_found": ("{name} is damaged: its list of pages is lost, so its pages were found one by one "
                        "and may not be in the order they were printed in.",
                        "{name} 已损坏：它的页面列表丢失了，因此各页是逐一找回的，顺序可能与印刷顺序不同。"),
    "doc_lost_page": ("Page {pages} of {name} could not be read (the file is damaged or cut short there): "
                      "the text lacks it.",
                      "{name} 的第 {pages} 页无法读取（文件在该处损坏或被截断）：文本中缺少这一页。"),
    "doc_lost_pages": ("Pages {pages} of {name} could not be read (the file is damaged or cut short there): "
                       "the text lacks them.",
                       "{name} 的第 {pages} 页无法读取（文件在这些地方损坏或被截断）：文本中缺少这些页。"),
    "doc_lost_again": ("Download or export it again for the whole text.",
                       "如需完整文本，请重新下载或导出该文件。"),
    "doc_budget": ("{pages}, {tokens:,} tokens — {fraction:.1%} of the served {context:,}-token context.",
                   "{pages}，{tokens:,} 个词元——占所部署 {context:,} 词元上下文的 {fraction:.1%}。"),
    "pages": (("{count:,} page", "{count:,} pages"), "{count:,} 页"),
    # Several documents in one chat (glm1m/documents/sets.py): "3 documents, 40 pages and 7 sections".
    "doc_set_held": ("{count:,} documents, {held}", "{count:,} 份文档，{held}"),
    "and": (" and ", "和 "),
    "doc_already": ("**{name}** is already in this chat, as document {label}: not added again.",
                    "**{name}** 已作为文档 {label} 在此对话中：不再重复添加。"),
    "doc_chosen": ("**{name}**: {budget} Reading it {strategy}.",
                   "**{name}**：{budget}读取方式：{strategy}。"),
    "whole": ("whole", "整篇读取"),
    "map_reduce": ("part by part (map-reduce)", "分段读取（map-reduce）"),
    "doc_choose": ("{budget}\n\n{wait}\n\nRead it whole (best answers), part by part (map-reduce: the "
                   "first answer comes sooner), or look things up (the model finds and reads the pages a "
                   "question needs: for questions about a few places)?",
                   "{budget}\n\n{wait}\n\n整篇读取（回答最好）、分段读取（map-reduce："
                   "第一个回答来得更快），还是查找阅读（模型查找并阅读问题所需的页面：适合只涉及几处的问题）？"),
    "wait_whole": ("Until the first answer starts: {when}; the model reads all {tokens:,} tokens first, "
                   "and follow-up questions reuse that work and start fast.",
                   "到回答开始前：{when}；模型要先读完全部 {tokens:,} 个词元，之后的追问会复用这些计算，"
                   "开始得很快。"),
    "waiting_whole": ("The model is reading all {tokens:,} tokens of {name} … {elapsed:.0f} s, {tail}",
                      "模型正在读取 {name} 的全部 {tokens:,} 个词元 … {elapsed:.0f} 秒，{tail}"),
    "waiting_parts": ("Reading {name} part by part{done} … {elapsed:.0f} s",
                      "正在分段读取 {name}{done} … {elapsed:.0f} 秒"),
    "waiting_parts_done": (": {line}", "（{line}）"),  # the parts' progress line, in waiting_parts
    # A document this server read before (a follow-up, or the shelf's note): its prefix cache or KV
    # tier may still hold it (a 1M-token revisit answered in 8-25 s on one H200, issue 27), or not.
    "waiting_again": ("Asking {name} again … {elapsed:.0f} s: this server read it before{before}, so if "
                      "it still holds its {tokens:,} tokens the answer starts in seconds; else {tail}",
                      "再次询问 {name} … {elapsed:.0f} 秒：此服务器之前读过它{before}，如果仍保留着它的 "
                      "{tokens:,} 个词元，回答几秒内就会开始；否则{tail}"),
    "wait_revisit": ("This server read {name} before{before}: if it still holds it, the answer starts in "
                     "seconds; reading all {tokens:,} tokens again would take {when}.",
                     "此服务器之前读过 {name}{before}：如果它仍保留着，回答几秒内就会开始；重新读取全部 "
                     "{tokens:,} 个词元需要{when}。"),
    "read_at": (" (at {when})", "（于 {when}）"),
    "no_estimate": ("no estimate for this server yet", "暂无此服务器的估计"),
    "left": ("about {seconds} left ({estimate})", "约剩 {seconds}（{estimate}）"),
    "past": ("longer than the {seconds} expected ({estimate})", "已超过预计的 {seconds}（{estimate}）"),
    "about": ("about {seconds} ({estimate})", "约 {seconds}（{estimate}）"),
    "estimate_gpu": ("an estimate for {where}", "按 {where} 估计"),
    "estimate_seen": (("an estimate from {count} prompt read on this server",
                       "an estimate from {count} prompts read on this server"),
                      "根据此服务器已读的 {count} 个提示估计"),
    "doc_read_whole": ("Read **{name}**: {pages}, {tokens:,} tokens, whole, in {seconds}.",
                       "已读取 **{name}**：{pages}，{tokens:,} 个词元，整篇，用时 {seconds}。"),
    "doc_read_parts": ("Read **{name}** part by part: {parts}, in {seconds}.",
                       "已分段读取 **{name}**：{parts}，用时 {seconds}。"),
    "doc_stopped": ("Stopped reading **{name}** after {seconds}.", "已停止读取 **{name}**，用时 {seconds}。"),
    "doc_failed": ("Reading **{name}** ended by an error (see below) after {seconds}.",
                   "读取 **{name}** 时出错（见下方），用时 {seconds}。"),
    "cut": ("The answer stopped at the token limit ({limit:,} tokens). For a longer one, raise "
            "**{label}** in the ⚙ settings and ask again.",
            "回答在词元上限（{limit:,} 个词元）处被截断。需要更长的回答，请在 ⚙ 设置中调高"
            "“**{label}**”后重新提问。"),
    "stopped": ("Task manually stopped.", "任务已手动停止。"),
    "seconds": ("{n:.1f} s", "{n:.1f} 秒"),
    "seconds_whole": ("{n:.0f} s", "{n:.0f} 秒"),
    "minutes": ("{n:.0f} minutes", "{n:.0f} 分钟"),
    # The upload checks (chainlit_app/upload_guard.py): what a kind of file is for, and the refusals.
    "use_ask": ("to summarise it or ask about it", "用于总结或提问"),
    "use_translate_column": ("to translate a column", "用于翻译一列"),
    "use_translate_sheet": ("to translate columns of a sheet", "用于翻译工作表中的列"),
    "or": (" or ", "、"),  # between the last two kinds of a use
    "upload_offer": ("a {kinds} ({use})", "{kinds}（{use}）"),
    "upload_offers_or": (" or ", "，或"),  # between the uses
    "upload_unsupported": ("{name} is not a file glm1m reads: attach {offers}.",
                           "{name} 不是 glm1m 能读取的文件：请附上 {offers}。"),
    "upload_too_large": ("{name} is larger than {limit}, the limit for {kind} files ({setting}).",
                         "{name} 超过 {limit}，这是 {kind} 文件的上限（{setting}）。"),
    "upload_limit": ("{kinds} up to {limit}", "{kinds} 最大 {limit}"),
    "upload_limits_sep": (", ", "，"),
    "upload_too_large_for_any": ("The upload is {size:,.0f} MB, more than glm1m takes for any file "
                                 "({limits}).",
                                 "上传的文件有 {size:,.0f} MB，超过了 glm1m 对任何文件的上限（{limits}）。"),
    "upload_empty": ("{name} is empty (0 bytes): there is nothing to read. Attach the file again with "
                     "its content.", "{name} 是空文件（0 字节）：没有可读取的内容。请重新附上有内容的文件。"),
    "upload_one_file": ("Send one file per upload, as the page's paperclip does.",
                        "每次上传只发送一个文件（页面上的回形针就是这样做的）。"),
    "upload_not_multipart": ("Send the file as multipart/form-data, as the page's paperclip does.",
                             "请以 multipart/form-data 发送文件（页面上的回形针就是这样做的）。"),
    "upload_cut_short": ("The upload was cut short or is not a well-formed form; attach the file again.",
                         "上传被中断或格式不正确；请重新附上文件。"),
    "upload_no_file": ("The upload holds no file; attach one.", "上传中没有文件；请附上一个。"),
    # Files of one message left unread (chainlit_app/uploads.py); `count` is how many.
    "left_out_documents": (
        ("Only {used} is read: a table is translated on its own, so {names} was not read. Attach each "
         "table in a message of its own, and documents (several may go together) in a message without "
         "a table.",
         "Only {used} is read: a table is translated on its own, so {names} were not read. Attach each "
         "table in a message of its own, and documents (several may go together) in a message without "
         "a table."),
        "只读取了 {used}：表格要单独翻译，因此 {names} 未被读取。请把每个表格放在单独的消息中发送；"
        "文档（可以几份一起）放在不含表格的消息中。"),
    "left_out_tables": (
        ("Only {used} is read: one table per message, so {names} was not read. Attach each table in a "
         "message of its own, and documents (several may go together) in a message without a table.",
         "Only {used} is read: one table per message, so {names} were not read. Attach each table in a "
         "message of its own, and documents (several may go together) in a message without a table."),
        "只读取了 {used}：每条消息只翻译一个表格，因此 {names} 未被读取。请把每个表格放在单独的消息中"
        "发送。"),
    # Choosing what of a table to translate (chainlit_app/table_choice.py).
    "pick_sheet": ("**{name}** has {count} sheets. Which one should be translated?",
                   "**{name}** 有 {count} 个工作表。翻译哪一个？"),
    "pick_column": ("Which column should be translated?", "翻译哪一列？"),
    "pick_several": ("Several columns …", "多列 …"),
    "pick_columns": ("Which columns should be translated? Click a column to add it (again to take it "
                     "out), then **Start**. Chosen: {chosen}.",
                     "翻译哪些列？点一列即加入（再点一次即移除），选好后点“**开始**”。已选择：{chosen}。"),
    "pick_none_yet": ("none yet", "还没有"),
    "pick_chosen": ("Columns to translate: {chosen}.", "要翻译的列：{chosen}。"),
    "pick_start": ("Start", "开始"),
}
