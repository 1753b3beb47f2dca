"""How glm1m counts a file's size: one megabyte is 1024² bytes, a kilobyte 1024, everywhere.

Every GLM1M_*_MB limit (uploads, unpacked sizes, the shelf's cap) and every size a sentence says
are counted in these, so a limit and the figure shown beside it agree. Chainlit's server compares
its upload limit (`max_size_mb`) with 1024² bytes too (chainlit/server.py in 2.12); only its page's
file picker counts 10⁶ (upload_guard.configure_page rounds up for it).
"""

from __future__ import annotations

KB = 1024
MB = 1024 * KB


def mb(n: int) -> float:
    """n bytes in megabytes."""
    return n / MB


def size_words(n: int) -> str:
    """A size as a sentence says it: '12.3 MB', or under a tenth of one, '512.0 KB'."""
    return f"{n / MB:,.1f} MB" if n >= MB // 10 else f"{n / KB:,.1f} KB"
