"""Writing benchmark rows to benchmarks/results/*.csv (issue 16: every figure in a file, so a regression shows)."""
from __future__ import annotations

import csv
import os


def write_rows(path: str, rows: list[dict]) -> None:
    """All ``rows`` (dicts with the same keys, in order) to ``path``, through a temporary file renamed at the end
    (never half a file)."""
    if not rows:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)
