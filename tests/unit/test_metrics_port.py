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
