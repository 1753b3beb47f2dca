"""The web door's own sentences made outside i18n.py (the upload checks, the one-table-per-message
notice) as a Chinese page shows them: each made by the real function in the page's language, from
the catalog's ids, with its fields (names, sizes, settings) kept."""

from __future__ import annotations

import re

from glm1m.catalog import EN, ZH
from glm1m.chainlit_app.upload_guard import KINDS, kind_of, too_large, too_large_for_any, unsupported
from glm1m.chainlit_app.uploads import sort_uploads
from glm1m.settings import Settings

SETTINGS = Settings(document_max_mb=2, csv_max_mb=1, xlsx_max_mb=1, _env_file=None)
CHINESE = re.compile(r"[\u4e00-\u9fff]")


def test_an_unsupported_file_names_every_kind_in_chinese() -> None:
    text = unsupported("notes.xyz", ZH)
    assert text.startswith("notes.xyz 不是 glm1m 能读取的文件")
    for kind in KINDS:
        assert kind.name in text, kind.name
    assert "用于总结或提问" in text and "用于翻译一列" in text and " or " not in text


def test_size_refusals_keep_their_numbers_and_settings() -> None:
    kind = kind_of("big.csv")
    assert kind is not None
    text = too_large("big.csv", kind, SETTINGS, ZH)
    assert text == "big.csv 超过 1 MB，这是 CSV 文件的上限（GLM1M_CSV_MAX_MB）。"
    text = too_large_for_any(500 * 1024 * 1024, SETTINGS, ZH)
    assert text.startswith("上传的文件有 500 MB") and "CSV" in text and "最大" in text and "up to" not in text


class F:
    def __init__(self, name: str) -> None:
        self.name, self.path, self.mime = name, f"/tmp/{name}", None


def test_the_one_table_per_message_notice_reads_in_chinese() -> None:
    notice = sort_uploads([F("rows.csv"), F("report.pdf"), F("more.csv")]).left_out()
    assert notice is not None
    assert notice.render(ZH) == ("只读取了 rows.csv：表格要单独翻译，因此 more.csv、report.pdf "
                                 "未被读取。请把每个表格放在单独的消息中发送；"
                                 "文档（可以几份一起）放在不含表格的消息中。")
    tables = sort_uploads([F("rows.csv"), F("more.csv")]).left_out()
    assert tables is not None
    assert tables.render(ZH).startswith("只读取了 rows.csv：每条消息只翻译一个表格，因此 more.csv 未被读取。")


def test_one_file_left_out_was_not_read_and_two_were_not() -> None:
    one = sort_uploads([F("rows.csv"), F("more.csv")]).left_out()
    two = sort_uploads([F("rows.csv"), F("more.csv"), F("report.pdf")]).left_out()
    assert one is not None and two is not None
    assert "so more.csv was not read." in one.render(EN)
    assert "so more.csv, report.pdf were not read." in two.render(EN)


def test_the_same_refusals_in_english_have_no_chinese() -> None:
    kind = kind_of("big.csv")
    assert kind is not None
    for text in (unsupported("notes.xyz"), too_large("big.csv", kind, SETTINGS),
                 too_large_for_any(500 * 1024 * 1024, SETTINGS)):
        assert not CHINESE.search(text), text
