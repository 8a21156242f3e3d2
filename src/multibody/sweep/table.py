"""SweepTable: the gathered results of a parameter sweep, one row per scenario, saved as CSV or HDF5.

Columns, in order: ``scenario`` (index in the scenario list), the scenario's parameters (factory
keyword arguments, run options, ``q0:NAME``, ``v0:NAME``, ``lock:NAME``), ``status`` ("ok" or
"failed"), ``error`` (the message of a failed scenario, empty otherwise), ``wall_time_s``,
``cpu_time_s`` (of the worker process, for telling contention from work), ``steps``,
``rhs_evaluations``, ``energy_drift_rel``, ``constraint_violation_max`` and the final coordinates
``q:NAME`` (empty / NaN for a failed scenario).

HDF5 layout (h5py, pandas via h5py, h5dump)::

    /columns/<name>   (rows,)  float64 when every value is a number (missing -> NaN), else UTF-8 strings
    attrs: columns (JSON list, the column order), format = "multibody-sweep", version, meta (JSON)

Both writers write a temporary file next to the target and rename it (atomic): an interrupted save
never leaves half a table over a good one.
"""
from __future__ import annotations

import csv
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MultibodyError

FORMAT = "multibody-sweep"
VERSION = 1
#: the per-scenario measurements, after the parameters and before the final coordinates
MEASURES = ("status", "error", "wall_time_s", "cpu_time_s", "steps", "rhs_evaluations", "energy_drift_rel",
            "constraint_violation_max")


@dataclass
class SweepTable:
    """rows: one dict per scenario (keys among ``columns``); meta: model name, defaults, timing."""

    columns: list[str]
    rows: list[dict]
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_rows(cls, rows: list[dict], meta: dict | None = None) -> "SweepTable":
        """Order the columns: scenario, parameters (first-seen order), measures, q:NAME."""
        rows = sorted(rows, key=lambda r: r["scenario"])
        seen = list(dict.fromkeys(k for r in rows for k in r))
        params = [k for k in seen if k != "scenario" and k not in MEASURES and not k.startswith("q:")]
        finals = [k for k in seen if k.startswith("q:")]
        return cls(["scenario", *params, *MEASURES, *finals], rows, dict(meta or {}))

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list:
        if name not in self.columns:
            raise MultibodyError(f"the sweep table has no column '{name}'; columns: {', '.join(self.columns)}.")
        return [r.get(name) for r in self.rows]

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.rows if r.get("status") != "ok"]

    def final_q(self, row: dict) -> np.ndarray:
        """The final coordinates of one row, in column order (NaN where missing)."""
        return np.array([_number(row.get(c)) for c in self.columns if c.startswith("q:")])

    def save(self, path) -> Path:
        """CSV for a .csv path, HDF5 for .h5/.hdf5 (atomic write)."""
        suffix = Path(path).suffix.lower()
        if suffix == ".csv":
            return self.to_csv(path)
        if suffix in (".h5", ".hdf5"):
            return self.to_hdf5(path)
        raise MultibodyError(f"cannot save the sweep table as '{path}': use a .csv, .h5 or .hdf5 file name.")

    def to_csv(self, path) -> Path:
        """One header line with the column names, one line per scenario; floats with repr precision."""
        def write(f):
            w = csv.writer(f)
            w.writerow(self.columns)
            for r in self.rows:
                w.writerow(["" if r.get(c) is None else _csv_value(r.get(c)) for c in self.columns])
        return _atomic(path, write, text=True)

    def to_hdf5(self, path) -> Path:
        import h5py

        def write(f):
            with h5py.File(f, "w") as h5:
                h5.attrs.update(format=FORMAT, version=VERSION, columns=json.dumps(self.columns),
                                meta=json.dumps(self.meta, default=str))
                grp = h5.create_group("columns")
                for c in self.columns:
                    grp.create_dataset(c, data=_array(self.column(c)))
        return _atomic(path, write, text=False)

    @classmethod
    def load(cls, path) -> "SweepTable":
        """Read a table written by :meth:`to_hdf5` (numbers as floats, strings as str)."""
        import h5py

        try:
            with h5py.File(path, "r") as h5:
                if h5.attrs.get("format") != FORMAT:
                    raise MultibodyError(f"'{path}' is not a multibody sweep table.")
                columns = json.loads(h5.attrs["columns"])
                data = {c: h5["columns"][c][()] for c in columns}
                meta = json.loads(h5.attrs.get("meta", "{}"))
        except OSError as exc:
            raise MultibodyError(f"cannot read sweep table '{path}': {exc}") from None
        n = len(next(iter(data.values()))) if data else 0
        rows = [{c: _from_h5(data[c][i]) for c in columns} for i in range(n)]
        for r in rows:
            r["scenario"] = int(r["scenario"])
        return cls(columns, rows, meta)


def _number(x) -> float:
    return float(x) if isinstance(x, (int, float, np.number)) and not isinstance(x, bool) else math.nan


def _csv_value(x):
    return repr(float(x)) if isinstance(x, (float, np.floating)) else x


def _array(values: list) -> np.ndarray:
    if all(v is None or (isinstance(v, (int, float, np.number)) and not isinstance(v, bool)) for v in values):
        return np.array([math.nan if v is None else float(v) for v in values], dtype=float)
    import h5py
    return np.array(["" if v is None else str(v) for v in values], dtype=h5py.string_dtype())


def _from_h5(x):
    if isinstance(x, bytes):
        return x.decode()
    return float(x) if isinstance(x, np.floating) else x


def _atomic(path, write, *, text: bool) -> Path:
    path = Path(path)
    if not path.parent.is_dir():
        raise MultibodyError(f"cannot write '{path}': the directory '{path.parent}' does not exist.")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        if text:
            with os.fdopen(fd, "w", newline="") as f:
                write(f)
        else:
            os.close(fd)
            write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
