"""A taken metrics port is said once and costs no chat (it made every chat start fail)."""

from __future__ import annotations

import socket

import pytest

from glm1m.chainlit_app import metrics


def test_a_taken_metrics_port_warns_once_and_raises_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        metrics.serve(port)  # the first chat start
        metrics.serve(port)  # the next ones
    warnings = [line for line in capsys.readouterr().err.splitlines() if "metrics cannot listen" in line]
    assert len(warnings) == 1 and f"127.0.0.1:{port}" in warnings[0] and "GLM1M_METRICS_PORT" in warnings[0]


def test_a_table_failure_keeps_its_prometheus_label() -> None:
    """TableError was CsvError (renamed: XLSX raises it too); dashboards keep kind="CsvError"."""
    from glm1m.errors import TableError

    def count() -> float:
        return metrics.FAILURES.labels(kind="CsvError")._value.get()

    before = count()
    metrics.failure(TableError(key="table_empty", name="rows.xlsx"))
    assert count() == before + 1
    assert "TableError" not in {s.labels["kind"] for m in metrics.FAILURES.collect() for s in m.samples}
