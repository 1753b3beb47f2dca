"""One run of a job at a time, across tasks and processes; the lock ends with its holder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from glm1m.errors import JobAlreadyRunning
from glm1m.translation.lock import job_lock


def test_a_second_run_of_the_same_job_is_told_and_a_finished_one_frees_it(tmp_path: Path) -> None:
    output = tmp_path / "rows.translated.csv"
    with job_lock(output, "rows.csv"):
        with pytest.raises(JobAlreadyRunning, match="rows.csv is already being translated"):
            with job_lock(output, "rows.csv"):
                pass
        with job_lock(tmp_path / "other.translated.csv", "other.csv"):  # another job runs
            pass
    with job_lock(output, "rows.csv"):  # released
        pass


def test_another_process_holding_the_job_is_seen_and_its_death_frees_it(tmp_path: Path) -> None:
    output = tmp_path / "rows.translated.csv"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from glm1m.translation.lock import job_lock\n"
         "with job_lock(Path(sys.argv[1]), 'rows.csv'):\n    print('held', flush=True); sys.stdin.read()",
         str(output)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[2])
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(JobAlreadyRunning):
            with job_lock(output, "rows.csv"):
                pass
    finally:
        holder.kill()
        holder.wait()
    with job_lock(output, "rows.csv"):  # a killed holder leaves no stale lock
        pass
