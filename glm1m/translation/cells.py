"""A CSV cell as both sides of a CSV table read it: NUMBER, a cell that is a number (table.py
offers no such column to translate; csv_output.py leaves it unquoted though it starts with a
sign), and FIELD_LIMIT, the largest field Python's csv module is let read (the input by table.py,
a finished output by csv_output.py). Kept in neither, so the writer needs nothing of the reader."""

from __future__ import annotations

import re

NUMBER = re.compile(r"[+-]?(\d{1,3}(,\d{3})+(\.\d*)?|\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?%?")
# Python's csv refuses a field over 128 KB by default; a cell of 300,000 Chinese characters is
# real (a whole contract in one cell), and the upload limit (GLM1M_CSV_MAX_MB) bounds it anyway.
FIELD_LIMIT = 1 << 30
