"""Result: one labelled container for everything a run produced; saved as self-describing HDF5.

File layout (open with h5py, h5dump, HDFView, pandas/xarray via h5py)::

    /time                   (k,)     seconds
    /series/<name>          (k, c)   attrs: labels (c strings), unit, description
    attrs: summary (JSON), events (JSON), format = "multibody-result", version

Series written by every run: q, v, a (accelerations), multipliers, energy (kinetic, potential,
total), violation (position, velocity). Formulations add their own (rank, R diagonal, ...).
Saving writes a temporary file next to the target and renames it: a failed or interrupted save
never leaves half a result over a good one.
"""
from __future__ import annotations

import csv
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MultibodyError

FORMAT = "multibody-result"
VERSION = 1


@dataclass(frozen=True)
class Series:
    """data (k, c) with one label per column."""

    data: np.ndarray
    labels: tuple[str, ...]
    unit: str = ""
    description: str = ""


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
                h5.attrs["format"], h5.attrs["version"] = FORMAT, VERSION
                h5.attrs["summary"] = json.dumps(_jsonable(self.summary))
                h5.attrs["events"] = json.dumps(_jsonable(self.events))
                h5.create_dataset("time", data=self.t).attrs["unit"] = "s"
                grp = h5.create_group("series")
                for name, s in self.series.items():
                    ds = grp.create_dataset(name, data=s.data)
                    ds.attrs["labels"] = list(s.labels)
                    ds.attrs["unit"], ds.attrs["description"] = s.unit, s.description
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
                series = {name: Series(ds[()], tuple(str(x) for x in ds.attrs["labels"]),
                                       str(ds.attrs.get("unit", "")), str(ds.attrs.get("description", "")))
                          for name, ds in h5["series"].items()}
                return cls(h5["time"][()], series, json.loads(h5.attrs["summary"]),
                           json.loads(h5.attrs["events"]))
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
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


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
