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
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MultibodyError
from . import hdf5

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
        """Write HDF5 atomically (temporary file + rename)."""
        import h5py

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        try:
            with h5py.File(tmp, "w") as h5:
                hdf5.write(h5, self, _jsonable)
            _umask_mode(tmp)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def load(cls, path) -> "Result":
        import h5py

        try:
            with h5py.File(path, "r") as h5:
                if h5.attrs.get("format") != FORMAT:
                    raise MultibodyError(f"'{path}' is not a multibody result file.")
                return cls(*hdf5.read(h5, Series))
        except OSError as exc:
            raise MultibodyError(f"cannot read result file '{path}': {exc}") from None

    def to_csv(self, path) -> Path:
        """One wide table: t, then one column per series label ("series:label"); written atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        names = list(self.series)
        header = ["t"] + [f"{n}:{label}" for n in names for label in self.series[n].labels]
        table = np.column_stack([self.t] + [self.series[n].data for n in names])
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(header)
                w.writerows(table.tolist())
            _umask_mode(tmp)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


def _umask_mode(path) -> None:
    """Give a temporary file (mkstemp: 0600) the mode a new file gets from open(): 0666 minus the umask."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


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
