"""The app's own Prometheus counters, beside vLLM's: what users got done, and what failed."""

from __future__ import annotations

import sys

from prometheus_client import Counter, start_http_server

from glm1m.errors import (
    ContextTooLong,
    DocumentError,
    LimitReached,
    ServerBusy,
    ServerError,
    ServerTooSlow,
    ServerUnavailable,
    TableError,
)

CHAT_ANSWERS = Counter("glm1m_chat_answers", "Chat answers streamed to a user (stopped ones too)")
DOCUMENTS = Counter("glm1m_documents_processed", "Documents read and answered about")
ROWS_TRANSLATED = Counter("glm1m_rows_translated", "CSV rows translated")
ROWS_FAILED = Counter("glm1m_rows_failed", "CSV rows left untranslated after retries")
FAILURES = Counter("glm1m_failures", "User-facing failures, by kind", ["kind"])

# The label a kind is counted under: its class's name, but for TableError, which was CsvError
# until issue 35 renamed it (it is raised for XLSX too): dashboards and alerts built on
# kind="CsvError" keep counting it.
LABELS: dict[type[Exception], str] = {TableError: "CsvError"}


def kind_label(kind: type[Exception]) -> str:
    return LABELS.get(kind, kind.__name__)


# Export every kind at 0 from the start, so dashboards and alerts see the series before the first
# failure (a labelled counter has no samples until a label is used).
for _kind in (ServerUnavailable, ServerBusy, ServerTooSlow, ContextTooLong, ServerError, TableError,
              DocumentError, LimitReached):
    FAILURES.labels(kind=kind_label(_kind))

_serving: set[int] = set()


def serve(port: int) -> None:
    """Expose /metrics on 127.0.0.1:port once per process (0 turns it off). A port of its own
    keeps the metrics out of Chainlit's routes and its login."""
    if port and port not in _serving:
        _serving.add(port)  # tried once: a taken port is said once, not at every chat start
        try:
            start_http_server(port, addr="127.0.0.1")
        except OSError as error:
            print(f"glm1m: the app's metrics cannot listen on 127.0.0.1:{port} ({error.strerror}); "
                  f"chats work as usual without them. Set GLM1M_METRICS_PORT to a free port, or 0 "
                  f"to turn them off.", file=sys.stderr, flush=True)


def failure(error: Exception) -> None:
    FAILURES.labels(kind=kind_label(type(error))).inc()
