"""Result: one labelled container for everything a run produced; saved as self-describing HDF5.

File layout: :mod:`multibody.results.hdf5` (netCDF-4 compatible: xarray with engine h5netcdf sees a
``time`` coordinate, label coordinates and CF ``units``); :meth:`Result.to_xarray` and
:meth:`Result.to_dataframe` give the same in memory (optional extra ``data``: xarray, pandas, h5netcdf).

Series written by every run: q, v, a (accelerations), multipliers, energy (kinetic, potential,
total), violation (position, velocity). Formulations add their own (rank, R diagonal, ...).
Saving writes a temporary file next to the target and renames it: a failed or interrupted save
never leaves half a result over a good one. Files get the permissions of the umask (like open()).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FileFormatError
from . import hdf5
from .outputs import atomic_write, write_hdf5
from .safe_h5 import malformed, open_checked

FORMAT = "multibody-result"
VERSION = hdf5.VERSION


@dataclass(frozen=True)
class Series:
    """data (k, c) with one label per column; ``unit`` (all columns) or ``column_units`` (one per column)."""

    data: np.ndarray
    labels: tuple[str, ...]
    unit: str = ""
    description: str = ""
    column_units: tuple[str, ...] = ()


@dataclass
class Result:
    t: np.ndarray
    series: dict[str, Series]
    summary: dict = field(default_factory=dict)
    events: list = field(default_factory=list)

    # convenient views
    def __getitem__(self, name: str) -> np.ndarray:
        return self.series[name].data

    def column(self, series: str, label: str) -> np.ndarray:
        s = self.series[series]
        return s.data[:, s.labels.index(label)]

    @property
    def q(self):
        return self["q"]

    @property
    def v(self):
        return self["v"]

    @property
    def coordinate_names(self):
        return self.series["q"].labels

    # ------------------------------------------------------------------ views for the usual tools
    def to_xarray(self):
        """xarray.Dataset with a ``time`` coordinate and label coordinates (:mod:`.frames`; needs xarray)."""
        from .frames import to_xarray
        return to_xarray(self)

    def to_dataframe(self):
        """pandas.DataFrame indexed by time, columns (series, label) (:mod:`.frames`; needs pandas)."""
        from .frames import to_dataframe
        return to_dataframe(self)

    def __repr__(self) -> str:
        from .frames import text
        return text(self)

    def _repr_html_(self) -> str:
        from .frames import html_table
        return html_table(self)

    # ------------------------------------------------------------------ files
    def save(self, path) -> Path:
        """Write HDF5 atomically (:func:`multibody.results.outputs.atomic_write`: temporary file, fsync,
        rename; a symbolic link is written through; an existing file keeps its mode)."""
        return atomic_write(path, self.write_hdf5_to)

    def write_hdf5_to(self, path) -> None:
        """Write the HDF5 file at ``path`` directly (not atomic: for callers that stage their own files)."""
        write_hdf5(path, lambda h5: hdf5.write(h5, self, _jsonable))

    @classmethod
    def load(cls, path) -> "Result":
        """Read a result file; refuses external links and storage, oversized and malformed content with
        one :class:`~multibody.errors.FileFormatError` (:mod:`.safe_h5`)."""
        with open_checked(path, "result file") as h5, malformed(path, "result file"):
            if h5.attrs.get("format") != FORMAT:
                raise FileFormatError(f"'{path}' is not a multibody result file.")
            result = cls(*hdf5.read(h5, Series))
            check_loaded(result)
            return result

    def to_csv(self, path) -> Path:
        """One wide table: t, then one column per series label ("series:label"); written atomically."""
        return atomic_write(path, self.write_csv_to)

    def write_csv_to(self, path) -> None:
        """Write the CSV table at ``path`` directly (not atomic)."""
        names = list(self.series)
        header = ["t"] + [f"{n}:{label}" for n in names for label in self.series[n].labels]
        table = np.column_stack([self.t] + [self.series[n].data for n in names])
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            w.writerows(table.tolist())


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


#: JSON-ready copy of a summary or event log (numpy arrays and scalars as lists and numbers)
jsonable = _jsonable


def check_loaded(result: Result) -> None:
    """Shapes of a loaded result (ValueError: :func:`.safe_h5.malformed` names the file): t 1-D; each
    series (len(t), len(labels)); summary a dict and events a list."""
    t = np.asarray(result.t)
    if t.ndim != 1 or t.dtype.kind not in "fiu":
        raise ValueError(f"'time' must be a 1-D array of numbers, got shape {t.shape} of {t.dtype}")
    for name, s in result.series.items():
        data = np.asarray(s.data)
        if data.ndim != 2 or data.shape != (len(t), len(s.labels)) or data.dtype.kind not in "fiub":
            raise ValueError(f"series '{name}' has shape {data.shape} ({data.dtype}), expected "
                             f"({len(t)}, {len(s.labels)}) numbers")
    if not isinstance(result.summary, dict) or not isinstance(result.events, list):
        raise ValueError("the 'summary' attribute must be a JSON object and 'events' a JSON list")
