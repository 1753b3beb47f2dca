"""The sentences of the rarer input failures: documents, tables and glossaries, accounts and secret
files (glm1m/documents/, glm1m/translation/, glm1m/accounts.py, glm1m/keys.py, glm1m/cli/).
(English, Chinese) per id; see glm1m/catalog/__init__.py for the convention."""

from __future__ import annotations

INPUTS: dict[str, tuple[str | tuple[str, str], str]] = {
    "list_or": ("{some} or {last}", "{some}或{last}"),  # "PDF, DOCX or text"
    # Documents (glm1m/documents/, glm1m/cli/extract.py and summarize.py).
    "doc_not_a_file": ("{path} is not a file that can be read (check the path).",
                       "{path} 不是可读取的文件（请检查路径）。"),
    "doc_cannot_read_file": ("{path} cannot be read ({reason}).", "{path} 无法读取（{reason}）。"),
    "doc_not_a_document": (
        "{name} is not a document glm1m reads: attach a {formats} file (a spreadsheet goes to "
        "translation as CSV).",
        "{name} 不是 glm1m 能读取的文档：请附上 {formats} 文件（表格请存为 CSV 后用于翻译）。"),
    "doc_unpacks_too_large": (
        "{name} would unpack to {mb:,.0f} MB, over the {limit:,.0f} MB glm1m unpacks for one {kind} "
        "file (a file built to fill memory looks like this). Open it in the program that made it, "
        "save it again, and upload that.",
        "{name} 解压后将有 {mb:,.0f} MB，超过了 glm1m 对单个 {kind} 文件解压的 {limit:,.0f} MB 上限"
        "（专为占满内存而做的文件就是这样）。请在生成它的程序中重新保存后再上传。"),
    "doc_reader_ended": (
        "Reading {name} stopped: its reader ended (exit code {code}). Open it in the program that "
        "made it, save it again, and upload that.",
        "读取 {name} 时中断了：读取进程已结束（退出码 {code}）。请在生成它的程序中重新保存后再上传。"),
    "doc_prompt_too_long": (
        "A prompt made from {name} came out longer than the server's context. Ask a shorter "
        "question, choose a shorter answer (Max new tokens), or read it part by part.",
        "由 {name} 生成的提示超出了服务器的上下文。请缩短问题、选择更短的回答（最大新词元数），或分段读取。"),
    "doc_no_room_for_answer": (
        "With this question, {name} ({tokens:,} tokens) leaves no room for an answer in the server's "
        "{max:,}-token context. Ask a shorter question, or attach the document again and read it "
        "part by part.",
        "加上这个问题后，{name}（{tokens:,} 个词元）在服务器 {max:,} 词元的上下文中没有留给回答的空间。"
        "请缩短问题，或重新附上文档并分段读取。"),
    "doc_too_long_whole": (
        "The document is {tokens:,} tokens and the server serves {max:,} (with room for a "
        "{answer:,}-token answer), so it cannot be read whole; use map-reduce, a shorter answer, or "
        "serve a longer --max-model-len.",
        "文档有 {tokens:,} 个词元，而服务器支持 {max:,} 个（还要为 {answer:,} 词元的回答留出空间），"
        "无法整篇读取；请使用 map-reduce、更短的回答，或以更长的 --max-model-len 部署。"),
    "question_too_long": (
        "The question is too long to read the document with: with it, the server's {max:,}-token "
        "context leaves {room:,} tokens for a part of the document (at least {least} are needed). "
        "Ask a shorter question.",
        "问题太长，无法据此读取文档：加上它之后，服务器 {max:,} 词元的上下文只剩 {room:,} 个词元"
        "留给文档的一段（至少需要 {least} 个）。请缩短问题。"),
    "doc_dense_text": (
        "{name} holds text the server counts as {per_char:,} tokens per character; it cannot be read "
        "part by part.",
        "{name} 中的文字被服务器算作每个字符 {per_char:,} 个词元，无法分段读取。"),
    "notes_too_long": (
        "The notes on {name} do not fit the server's {max:,}-token context with a {answer:,}-token "
        "answer. Ask for a shorter answer (Max new tokens), or serve a longer --max-model-len.",
        "{name} 的笔记加上 {answer:,} 词元的回答，放不进服务器 {max:,} 词元的上下文。"
        "请要求更短的回答（最大新词元数），或以更长的 --max-model-len 部署。"),
    "ocr_process_ended": (
        "Reading the scanned pages of {name} stopped: an OCR process ended ({why}). Try again, or "
        "set GLM1M_OCR_WORKERS lower.",
        "读取 {name} 的扫描页时中断了：一个 OCR 进程已结束（{why}）。请重试，或调低 GLM1M_OCR_WORKERS。"),
    "ocr_killed": ("it was killed, most likely for want of memory", "它被终止了，很可能是内存不足"),
    "ocr_exit_code": ("exit code {code}{tail}", "退出码 {code}{tail}"),
    "ocr_exit_said": (": {line}", "：{line}"),
    "ocr_page_failed": (
        "Page {page} of {name} could not be read with OCR ({error}). Check that the page opens in a "
        "PDF viewer; upload it again, or with --ocr never.",
        "{name} 的第 {page} 页无法用 OCR 读取（{error}）。请检查该页能否在 PDF 阅读器中打开；"
        "然后重新上传，或加上 --ocr never。"),
    "doc_lost_both": ("{found} {lost}", "{found}{lost}"),  # pages.lost_note; its sentences are the page's
    "doc_lost_note": ("{what} {again}", "{what}{again}"),
    "doc_reopen_damaged": (
        "The document this chat was about could not be reopened ({file} is damaged). Attach the file "
        "again to ask about it.",
        "无法重新打开此对话所讨论的文档（{file} 已损坏）。请重新附上该文件再提问。"),
    # Tables and glossaries (glm1m/translation/).
    "checkpoint_other": (
        "{name} holds the progress of a different input file or different settings. Delete it to "
        "start afresh, or choose another output file.",
        "{name} 保存的是另一个输入文件或另一套设置的进度。请删除它以重新开始，或选择另一个输出文件。"),
    "output_is_input": (
        "The output {output} is the file {path} itself; writing the translation there would destroy "
        "what is being read. Choose another output file.",
        "输出 {output} 就是文件 {path} 本身；把译文写到那里会毁掉正在读取的内容。请选择另一个输出文件。"),
    "output_write_failed": (
        "The output {name} could not be written ({reason}). Free some space or choose another "
        "folder, then run it again: the finished rows are kept and it continues from them.",
        "无法写入输出 {name}（{reason}）。请腾出空间或换一个文件夹，然后再次运行：已完成的行会保留，"
        "并从那里继续。"),
    "csv_row_unreadable": (
        "{name} row {row} cannot be read as CSV ({error}); fix that row or save the file again from "
        "your spreadsheet.",
        "{name} 第 {row} 行无法按 CSV 读取（{error}）；请修正这一行，或在表格软件中重新保存该文件。"),
    "csv_changed": (
        "{name} no longer reads as {encoding}: it was changed while being translated. Run the "
        "translation again.",
        "{name} 已无法按 {encoding} 读取：它在翻译过程中被修改了。请重新运行翻译。"),
    "csv_no_column": ("{name} has no column named {column}; its columns are {columns}.",
                      "{name} 没有名为 {column} 的列；它的列是 {columns}。"),
    "glossary_not_csv": ("The glossary {name} is not a two-column CSV ({error}).",
                         "术语表 {name} 不是两列的 CSV（{error}）。"),
    "glossary_two_columns": ("The glossary {name} needs two columns: term, translation.",
                             "术语表 {name} 需要两列：术语、译文。"),
    "csv_no_sheets": ("{name} is a CSV file, which has no sheets: leave out the sheet.",
                      "{name} 是 CSV 文件，没有工作表：请不要指定工作表。"),
    "xlsx_no_sheet": ("{name} has no sheet named {sheet}; its sheets are {sheets}.",
                      "{name} 没有名为 {sheet} 的工作表；它的工作表是 {sheets}。"),
    "xlsx_only_charts": ("{name} has no sheet with cells (only charts): there is nothing to translate.",
                         "{name} 没有含单元格的工作表（只有图表）：没有可翻译的内容。"),
    "sheet_empty": ("Sheet {sheet} of {name} is empty: there is nothing to translate{others}.",
                    "{name} 的工作表 {sheet} 是空的：没有可翻译的内容{others}。"),
    "sheet_header_only": (
        "Sheet {sheet} of {name} has a header row but no rows below it: there is nothing to "
        "translate{others}.",
        "{name} 的工作表 {sheet} 只有表头，下面没有数据行：没有可翻译的内容{others}。"),
    "sheet_others": ("; choose another sheet ({sheets})", "；请选择另一个工作表（{sheets}）"),
    "sheet_too_many_rows": (
        "Sheet {sheet} of {name} has more than {limit:,} rows, the most glm1m translates in one job "
        "(GLM1M_XLSX_MAX_ROWS). Split it into several workbooks, or copy the rows to translate into a "
        "workbook of their own.",
        "{name} 的工作表 {sheet} 超过 {limit:,} 行，这是 glm1m 一次任务最多翻译的行数"
        "（GLM1M_XLSX_MAX_ROWS）。请拆分成几个工作簿，或把要翻译的行复制到单独的工作簿中。"),
    "sheet_no_column": ("Sheet {sheet} of {name} has no column {column}; its columns are {columns}.",
                        "{name} 的工作表 {sheet} 没有列 {column}；它的列是 {columns}。"),
    "sheet_no_free_columns": (
        "Sheet {sheet} of {name} has no free columns left for the translations (Excel stops at "
        "column XFD).",
        "{name} 的工作表 {sheet} 已没有空闲的列可放译文（Excel 最多到 XFD 列）。"),
    "xlsx_unpacks_too_large": (
        "{name} unpacks to {mb:,.0f} MB, more than the {limit:g} MB glm1m reads from one workbook "
        "(GLM1M_XLSX_MAX_UNPACKED_MB). Split it into smaller workbooks.",
        "{name} 解压后有 {mb:,.0f} MB，超过了 glm1m 从单个工作簿读取的 {limit:g} MB 上限"
        "（GLM1M_XLSX_MAX_UNPACKED_MB）。请拆分成较小的工作簿。"),
    "xlsx_not_workbook": (
        "{name} is a zip file but not an Excel workbook (no xl/workbook.xml). Save it again from "
        "Excel as .xlsx.",
        "{name} 是 zip 文件，但不是 Excel 工作簿（没有 xl/workbook.xml）。请在 Excel 中重新另存为 .xlsx。"),
    "xlsx_openpyxl_failed": (
        "{name} could not be read as an .xlsx workbook ({error} in openpyxl): it is damaged, or holds "
        "a part glm1m cannot read. Open it in Excel, save it again as .xlsx, and retry.",
        "{name} 无法作为 .xlsx 工作簿读取（openpyxl 中的 {error}）：文件已损坏，或含有 glm1m 无法读取的部分。"
        "请在 Excel 中打开，重新另存为 .xlsx 后再试。"),
    "xlsx_write_failed": (
        "The translated {name} could not be written ({error} in openpyxl). The finished rows are "
        "kept; save the workbook again from Excel and run it again.",
        "无法写入翻译后的 {name}（openpyxl 中的 {error}）。已完成的行会保留；"
        "请在 Excel 中重新保存该工作簿后再次运行。"),
    # How a table is read (TableSource.describe, the CLI's first line and the page's job head).
    "layout_delimited": ("{delimiter}-separated", "{delimiter}分隔"),
    "layout_header_row": (
        ("the header is row {row}; the {count} row above it (a title, comments) left out",
         "the header is row {row}; the {count} rows above it (a title, comments) left out"),
        "表头在第 {row} 行，其上 {count} 行（标题、注释）未读取"),
    "layout_one": (" ({one})", "；{one}"),
    "layout_two": (" ({one}; {other})", "；{one}；{other}"),
    "read_as_text": ("{name} as {encoding}{layout}", "{name}（{encoding}）{layout}"),
    "read_as_sheet": ("sheet {sheet} of {name}", "{name} 的工作表 {sheet}"),
    "table_describe": (("reading {what}; translating column {columns}",
                        "reading {what}; translating columns {columns}"), "读取 {what}；翻译列 {columns}"),
    # What a translation job did (glm1m/translation/job.py Summary; its pieces are the page's).
    "summary_line": ("{translated:,} of {total:,} {unit} translated{resumed}{failed}{not_reached} → {output}",
                     "已翻译 {translated:,} / {total:,} {unit}{resumed}{failed}{not_reached} → {output}"),
    # A GLM1M_* value (or a command's option) glm1m cannot use (glm1m/settings.py settings_error).
    "settings_bad_env": (
        "{variable} is {given}, but it must be {expects}: fix it, or unset it{unset}.",
        "{variable} 的值是 {given}，但它必须是{expects}：请修正，或取消设置{unset}。"),
    "settings_default": (" for the default ({value})", "以使用默认值（{value}）"),
    "settings_bad_option": ("--{option} {given} is not usable: it must be {expects}.",
                            "--{option} {given} 无法使用：它必须是{expects}。"),
    "settings_unknown": ("{name}: {msg}.", "{name}：{msg}。"),
    "settings_and": ("{first} {rest}", "{first}{rest}"),
    "kind_int": ("a whole number", "整数"),
    "kind_float": ("a number", "数字"),
    "kind_bool": ("true or false", " true 或 false"),
    "kind_path": ("a path", "路径"),
    "kind_str": ("text", "文本"),
    "kind_any": ("a value", "一个值"),
    "bound_ge": ("at least {n}", "至少为 {n}"),
    "bound_gt": ("greater than {n}", "大于 {n}"),
    "bound_le": ("at most {n}", "至多为 {n}"),
    "bound_lt": ("less than {n}", "小于 {n}"),
    "bounds_both": ("{low} and {high}", "{low} 且{high}"),
    "expect_range": ("{kind} from {low} to {high}", " {low} 到 {high} 之间的{kind}"),
    "expect_of": ("{kind} of {bounds}", "{bounds} 的{kind}"),
    "expect_bounded": ("{kind} {bounds}", "{bounds} 的{kind}"),
    "expect_one_of": ("one of {first} or {last}", " {first} 或 {last} 之一"),
    # Accounts and secret files (glm1m/accounts.py, glm1m/keys.py, glm1m/cli/users.py).
    "user_in_env_password": ("{name} is defined by GLM1M_USERS; change the password there.",
                             "{name} 由 GLM1M_USERS 定义；请在那里修改密码。"),
    "user_in_env_remove": ("{name} is defined by GLM1M_USERS; remove it there.",
                           "{name} 由 GLM1M_USERS 定义；请在那里删除。"),
    "user_unknown": ("There is no user {name} in {path}; nothing was removed.",
                     "{path} 中没有用户 {name}；没有删除任何内容。"),
    "users_none": (
        "Login is on but no user exists: run `glm1m users add NAME` (writes {path}) or set "
        "GLM1M_USERS, or set GLM1M_AUTH=false.",
        "已开启登录，但还没有任何用户：请运行 `glm1m users add NAME`（写入 {path}），或设置 GLM1M_USERS，"
        "或设置 GLM1M_AUTH=false。"),
    "users_file_bad": (
        "{path} is not a glm1m users file ({error}); fix or remove it and add the users again with "
        "`glm1m users add NAME`.",
        "{path} 不是 glm1m 的用户文件（{error}）；请修正或删除它，"
        "再用 `glm1m users add NAME` 重新添加用户。"),
    "logins_locked": (
        ("Too many failed logins {whose}; wait {count} minute and try again.",
         "Too many failed logins {whose}; wait {count} minutes and try again."),
        "{whose}登录失败次数过多；请等 {count} 分钟后再试。"),
    "logins_from_address": ("from this address", "来自此地址的"),
    "logins_for_name": ("for {name}", "{name} 的"),
    "user_name_bad": (
        "User name {name} is not accepted: use 1 to 64 letters, digits or the characters . _ @ + -.",
        "用户名 {name} 不可用：请使用 1 到 64 个字母、数字或字符 . _ @ + -。"),
    "password_length": ("The password must be {least} to {most} characters long.",
                        "密码长度必须为 {least} 到 {most} 个字符。"),
    "auth_secret_bad": ("{error} (Everyone then logs in anew.)", "{error}（之后所有人都需要重新登录。）"),
    "users_env_bad": (
        "GLM1M_USERS entry {name} is not name=scrypt:N:R:P:SALT:HASH ({error}); make one with "
        "`glm1m users add NAME --print`.",
        "GLM1M_USERS 中的条目 {name} 不是 name=scrypt:N:R:P:SALT:HASH 格式（{error}）；"
        "请用 `glm1m users add NAME --print` 生成一个。"),
    "password_stdin_empty": ("--password-stdin got no input; pipe the password in.",
                             "--password-stdin 没有收到输入；请用管道传入密码。"),
    "passwords_differ": ("The two passwords differ; nothing was written.",
                         "两次输入的密码不一致；没有写入任何内容。"),
    "password_none": ("no password given; type it, or pipe it in with --password-stdin.",
                      "没有提供密码；请输入密码，或用 --password-stdin 以管道传入。"),
    "secret_unusable": (
        "{path}: {reason}; give GLM1M_DATA_DIR a folder this user can write, or delete the file to "
        "make a new one.",
        "{path}：{reason}；请把 GLM1M_DATA_DIR 设为此用户可写的文件夹，或删除该文件以生成新的。"),
    "secret_not_key": ("not a key file", "不是密钥文件"),
    "secret_empty": ("{path} is empty; delete it and start again.", "{path} 是空的；请删除它后重新开始。"),
}
