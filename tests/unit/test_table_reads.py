"""How often a table job reads its input: a 100 MB CSV read seven times was minutes of disk and
decoding before the first row was sent and after the last came back. The web door's path (open,
choose the columns, key the job, look for earlier work, run) reads a CSV four times in full: the
encoding's check, the rows' check (which also counts them and hashes the bytes for the job's key),
the cells sent, the output written."""

from __future__ import annotations

from pathlib import Path

from glm1m.translation.fanout import Job
from glm1m.translation.formats import open_table
from glm1m.translation.job import earlier_work, job_key, run_job
from tests.support.scripted_llm import ScriptedLlm

ROWS = 400
CELL = "合同条款 " * 500  # ~6 KB a row in UTF-8: the file is ~2.4 MB, far more than anything else read


def bytes_read() -> int:
    """What this process has read through read(2) so far (Linux)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar")


async def test_a_csv_job_reads_its_input_four_times_whatever_asks_about_it(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("id,text,note\n" + "".join(f"{i},{CELL}{i},n{i}\n" for i in range(ROWS)),
                    encoding="utf-8")
    size = path.stat().st_size
    job = Job("English", concurrency=8, retries=0)
    before = bytes_read()
    source = open_table(path)
    assert source.text_columns() == ("text", "note") and source.cell_count() == ROWS
    key = job_key(source, job)
    output = tmp_path / "out.csv"
    assert earlier_work(source, output, key) is None
    summary = await run_job(source, job, ScriptedLlm(), output, key=key)
    read = bytes_read() - before
    assert summary.complete and summary.total == ROWS
    assert read < 4.5 * size, f"the input was read {read / size:.1f} times"
    # The same file changed after it was opened is hashed again: its key is the new bytes'.
    path.write_text(path.read_text(encoding="utf-8") + f"{ROWS},more,x\n", encoding="utf-8")
    assert job_key(source, job) != key
