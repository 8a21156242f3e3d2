"""A result file written in chunks while the run goes on (issue 17: memory flat however long the run).

:class:`ResultStream` writes the layout of :mod:`multibody.results.hdf5` (version 2, the same datasets,
dimension scales and attributes as :meth:`Result.save`, so :meth:`Result.load` and xarray read it
unchanged) into an HDF5 file on disk: the datasets are created resizable (unlimited along time,
HDF5 chunks of ``chunk`` states) with the first block of states and grown by every further block
(:meth:`append`); the summary and events attributes are written last (:meth:`close`). Only the
block being appended is in memory.

The file is written where it is opened: to replace a result all or nothing, open it on a staged
temporary file (:func:`multibody.results.outputs.atomic_write`, :class:`~.outputs.Outputs`) so that a
run that fails never touches the earlier file. Unlike :func:`.outputs.write_hdf5`, the HDF5 library
itself writes to the disk here (the file does not fit in memory); a full disk then surfaces as the
library's OSError from :meth:`append`.
"""
from __future__ import annotations

import json

import numpy as np

from . import hdf5
from .outputs import HDF5_LIBVER

#: states per block when none is given (~1.7 KB a state for the double four-bar: ~7 MB a block)
DEFAULT_CHUNK = 4096
#: bytes of one HDF5 storage chunk of a dataset
HDF5_CHUNK_BYTES = 65536


def _rows(chunk: int, columns: int) -> int:
    """States per HDF5 storage chunk: at most ``chunk`` and about 64 KiB (HDF5 allocates whole chunks,
    so a short run does not take a block's worth of disk per dataset)."""
    return max(1, min(chunk, HDF5_CHUNK_BYTES // (8 * max(columns, 1))))


class ResultStream:
    """``append(t, series)`` adds a block of states (series: {name: Series}, the same names and
    labels in every block); ``close(summary, events)`` finishes the file. ``states``: how many so far."""

    def __init__(self, path, chunk: int = DEFAULT_CHUNK):
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            from ..errors import MultibodyError
            raise MultibodyError(f"the stream chunk must be a positive whole number of states, got {chunk!r}.")
        self.path, self.chunk, self.states, self._h5, self._layout = path, int(chunk), 0, None, None

    def append(self, t, series: dict) -> None:
        """Write a block: times (k,) and {name: Series with data (k, c)}."""
        t = np.asarray(t, dtype=float).reshape(-1)
        if self._h5 is None:
            self._create(series)
        layout = tuple((name, tuple(s.labels)) for name, s in series.items())
        if layout != self._layout:
            raise ValueError(f"a streamed block changed the series of the result file (names or labels): "
                             f"{[n for n, _ in layout]} after {[n for n, _ in self._layout]}")
        k0, k = self.states, len(t)
        for name in ("time", *series):
            ds = self._h5[name]
            ds.resize(k0 + k, axis=0)
            ds[k0:k0 + k] = t if name == "time" else np.asarray(series[name].data, dtype=float).reshape(k, -1)
        self.states += k

    def _create(self, series: dict) -> None:
        """The empty datasets, scales and series attributes (hdf5.write's layout), resizable in time."""
        import h5py

        h5 = self._h5 = h5py.File(self.path, "w", libver=HDF5_LIBVER)
        h5.attrs["format"], h5.attrs["version"], h5.attrs["Conventions"] = "multibody-result", hdf5.VERSION, "CF-1.8"
        time = h5.create_dataset("time", shape=(0,), maxshape=(None,), chunks=(_rows(self.chunk, 1),), dtype=float)
        time.attrs.update(units="s", standard_name="time", long_name="time", unit="s")
        time.make_scale("time")
        names = series["q"].labels if "q" in series else ()
        for name, s in series.items():
            if name in h5:
                raise ValueError(f"series name '{name}' clashes with a dimension of the result file")
            dim = hdf5.dimension_of(name, s, names)
            if dim not in h5:
                h5.create_dataset(dim, data=np.array(list(s.labels), dtype=object),
                                  dtype=h5py.string_dtype()).make_scale(dim)
            c = len(s.labels)
            ds = h5.create_dataset(name, shape=(0, c), maxshape=(None, c), chunks=(_rows(self.chunk, c), max(c, 1)),
                                   dtype=float)
            ds.dims[0].attach_scale(time)
            ds.dims[1].attach_scale(h5[dim])
            hdf5.series_attrs(ds, name, s)
        self._layout = tuple((name, tuple(s.labels)) for name, s in series.items())

    def close(self, summary: dict, events: list, jsonable) -> None:
        """Write the summary and events attributes and close the file."""
        if self._h5 is None:
            raise ValueError("no state was streamed into the result file")
        self._h5.attrs["summary"] = json.dumps(jsonable(summary))
        self._h5.attrs["events"] = json.dumps(jsonable(events))
        self.abort()

    def abort(self) -> None:
        """Close the file as it is (after a failure; the caller removes the staged file)."""
        if self._h5 is not None:
            self._h5.close()
            self._h5 = None
