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

Both writers write a temporary file next to the target, sync it and rename it (atomic,
:mod:`multibody.results.outputs`): an interrupted save never leaves half a table over a good one.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FileFormatError, MultibodyError
from ..results.outputs import atomic_write, write_hdf5
from ..results.safe_h5 import malformed, open_checked

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
        return atomic_write(path, lambda tmp: self.write_to(tmp, Path(path).suffix))

    def write_to(self, path, suffix: str) -> None:
        """Write the table at ``path`` directly in the format of ``suffix`` (.csv, .h5, .hdf5); not atomic:
        for callers that stage their own files (``multibody sweep`` with several --out)."""
        suffix = suffix.lower()
        if suffix == ".csv":
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(self.columns)
                for r in self.rows:
                    w.writerow(["" if r.get(c) is None else _csv_value(r.get(c)) for c in self.columns])
        elif suffix in (".h5", ".hdf5"):
            write_hdf5(path, self._fill)
        else:
            raise MultibodyError(f"cannot save the sweep table as '{path}': use a .csv, .h5 or .hdf5 file name.")

    def to_csv(self, path) -> Path:
        """One header line with the column names, one line per scenario; floats with repr precision."""
        return atomic_write(path, lambda tmp: self.write_to(tmp, ".csv"))

    def to_hdf5(self, path) -> Path:
        return atomic_write(path, lambda tmp: self.write_to(tmp, ".h5"))

    def _fill(self, h5) -> None:
        h5.attrs.update(format=FORMAT, version=VERSION, columns=json.dumps(self.columns),
                        meta=json.dumps(self.meta, default=str))
        grp = h5.create_group("columns")
        for c in self.columns:
            grp.create_dataset(c, data=_array(self.column(c)))

    @classmethod
    def load(cls, path) -> "SweepTable":
        """Read a table written by :meth:`to_hdf5` (numbers as floats, strings as str); refuses external
        links and storage, oversized and malformed content (:mod:`multibody.results.safe_h5`)."""
        what = "sweep table"
        with open_checked(path, what) as h5, malformed(path, what):
            if h5.attrs.get("format") != FORMAT:
                raise FileFormatError(f"'{path}' is not a multibody sweep table.")
            columns = json.loads(h5.attrs["columns"])
            if not (isinstance(columns, list) and all(isinstance(c, str) for c in columns)):
                raise ValueError("attribute 'columns' must be a JSON list of names")
            data = {c: h5["columns"][c][()] for c in columns}
            meta = json.loads(h5.attrs.get("meta", "{}"))
            lengths = {np.shape(v) for v in data.values()}
            if len(lengths) > 1 or any(len(n) != 1 for n in lengths) or not isinstance(meta, dict):
                raise ValueError(f"columns must be 1-D and of one length (got shapes {sorted(lengths)}) "
                                 "and 'meta' a JSON object")
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
