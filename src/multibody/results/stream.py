"""A result file written in chunks while the run goes on (issue 17: memory flat however long the run).

:class:`ResultStream` writes the layout of :mod:`multibody.results.hdf5` (version 2, the same datasets,
dimension scales and attributes as :meth:`Result.save`, so :meth:`Result.load` and xarray read it
unchanged) into an HDF5 file on disk: the datasets are created resizable (unlimited along time and
columns, HDF5 chunks of at most ``chunk`` states) with the first block of states and grown by every further
block (:meth:`append`); the summary and events attributes are written last (:meth:`close`). Only the
block being appended is in memory.

The file is written where it is opened: to replace a result all or nothing, open it on a staged
temporary file (:func:`multibody.results.outputs.atomic_write`, :class:`~.outputs.Outputs`) so that a
run that fails never touches the earlier file. Unlike :func:`.outputs.write_hdf5`, the HDF5 library
writes the file block by block here (it does not fit in memory), through h5py's ``fileobj`` driver into
a :class:`GuardedFile`: a failed write (a full disk, a quota) is kept there instead of reaching the
HDF5 library — which, after its own write failed, raised again while closing and crashed the
interpreter at exit (segfault, exit 139) — and :meth:`ResultStream.append` and
:meth:`ResultStream.close` raise it as the OSError it was.
"""
from __future__ import annotations

import errno
import json

import numpy as np

from . import hdf5
from .outputs import HDF5_LIBVER

#: states per block when none is given (~1.7 KB a state for the double four-bar: ~7 MB a block)
DEFAULT_CHUNK = 4096
#: bytes of one HDF5 storage chunk of a dataset
HDF5_CHUNK_BYTES = 65536


class GuardedFile:
    """An unbuffered file for h5py's ``fileobj`` driver that never fails a write: the first OSError of a
    write, flush or truncate is kept in :attr:`error` (later writes are dropped: the file is then
    garbage and its owner removes it) and raised by :meth:`check`."""

    def __init__(self, path):
        self.f, self.error = open(path, "w+b", buffering=0), None

    def _guarded(self, fn, *args):
        if self.error is None:
            try:
                return fn(*args)
            except OSError as exc:
                self.error = exc
        return None

    def _write_all(self, data) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            wrote = self.f.write(view[done:])
            if not wrote:
                raise OSError(errno.ENOSPC, "No space left on device")
            done += wrote
        return done

    def write(self, data) -> int:
        self._guarded(self._write_all, data)
        return memoryview(data).nbytes

    def flush(self) -> None:
        self._guarded(self.f.flush)

    def truncate(self, size=None):
        self._guarded(self.f.truncate, size)
        return size

    def read(self, n=-1):
        return self.f.read(n)

    def readinto(self, buf):
        return self.f.readinto(buf)

    def seek(self, pos, whence=0):
        return self.f.seek(pos, whence)

    def tell(self):
        return self.f.tell()

    def check(self) -> None:
        """Raise the kept error, if any."""
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        self._guarded(self.f.close)
        if not self.f.closed:
            self.f.close()


def _rows(chunk: int, columns: int) -> int:
    """States per HDF5 storage chunk: at most ``chunk`` and about 64 KiB (HDF5 allocates whole chunks,
    so a short run does not take a block's worth of disk per dataset)."""
    return max(1, min(chunk, HDF5_CHUNK_BYTES // (8 * max(columns, 1))))


class ResultStream:
    """``append(t, series)`` adds a block of states (series: {name: Series}); ``close(summary, events)``
    finishes the file. ``states``: how many so far.

    A block may bring series or columns the file does not have yet (a run with events: the rows of a
    locked joint's multipliers appear at the lock, a formulation's channels change with the model): the
    file's columns are the union of the blocks' labels in the order they first appeared, a series or a
    column is NaN in the states where a block did not have it (the joined series of an in-memory run,
    :func:`multibody.simulation.assemble.assemble_series`, are built the same way)."""

    def __init__(self, path, chunk: int = DEFAULT_CHUNK):
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            from ..errors import MultibodyError
            raise MultibodyError(f"the stream chunk must be a positive whole number of states, got {chunk!r}.")
        self.path, self.chunk, self.states, self._h5, self._file = path, int(chunk), 0, None, None
        self._labels = {}       # series name -> labels of its columns in the file

    def append(self, t, series: dict) -> None:
        """Write a block: times (k,) and {name: Series with data (k, c)}."""
        t = np.asarray(t, dtype=float).reshape(-1)
        if self._h5 is None:
            self._open(series)
        k0, k = self.states, len(t)
        for name, s in series.items():
            if name not in self._labels:
                self._create(name, s)
            self._widen(name, s)
        for name in ("time", *self._labels):
            ds = self._h5[name]
            ds.resize(k0 + k, axis=0)
            if name == "time":
                ds[k0:k0 + k] = t
                continue
            block = np.full((k, len(self._labels[name])), np.nan)
            if name in series:
                cols = [self._labels[name].index(x) for x in series[name].labels]
                block[:, cols] = np.asarray(series[name].data, dtype=float).reshape(k, -1)
            ds[k0:k0 + k] = block
        self.states += k
        self._file.check()

    def _open(self, series: dict) -> None:
        """The file, its attributes and the time scale."""
        import h5py

        self._file = GuardedFile(self.path)
        h5 = self._h5 = h5py.File(self._file, "w", libver=HDF5_LIBVER)
        h5.attrs["format"], h5.attrs["version"], h5.attrs["Conventions"] = "multibody-result", hdf5.VERSION, "CF-1.8"
        time = h5.create_dataset("time", shape=(0,), maxshape=(None,), chunks=(_rows(self.chunk, 1),), dtype=float)
        time.attrs.update(units="s", standard_name="time", long_name="time", unit="s")
        time.make_scale("time")
        self._names = series["q"].labels if "q" in series else ()

    def _create(self, name: str, s) -> None:
        """The dataset of a new series (hdf5.write's layout, resizable in time and columns; NaN in the
        states before it appeared) and its label scale."""
        import h5py

        h5 = self._h5
        if name in h5:
            raise ValueError(f"series name '{name}' clashes with a dimension of the result file")
        dim = hdf5.dimension_of(name, s, self._names)
        if dim not in h5:
            h5.create_dataset(dim, data=np.array(list(s.labels), dtype=object), maxshape=(None,),
                              chunks=(max(16, len(s.labels)),), dtype=h5py.string_dtype()).make_scale(dim)
        c = len(s.labels)
        ds = h5.create_dataset(name, shape=(self.states, c), maxshape=(None, None), fillvalue=np.nan,
                               chunks=(_rows(self.chunk, c), max(c, 1)), dtype=float)
        ds.dims[0].attach_scale(h5["time"])
        ds.dims[1].attach_scale(h5[dim])
        hdf5.series_attrs(ds, name, s)
        self._labels[name] = list(s.labels)

    def _widen(self, name: str, s) -> None:
        """Add the columns of the block's series ``s`` the file's series does not have yet (NaN in the
        earlier states)."""
        new = [x for x in s.labels if x not in self._labels[name]]
        if not new:
            return
        ds = self._h5[name]
        scale = ds.dims[1][0]
        if scale.name.lstrip("/") == hdf5.COORDINATE_DIM:
            raise ValueError(f"the columns of series '{name}' (the model's coordinates) changed during the run")
        self._labels[name] += new
        c = len(self._labels[name])
        ds.resize(c, axis=1)
        scale.resize((c,))
        scale[c - len(new):] = np.array(new, dtype=object)
        given = dict(zip(s.labels, s.column_units or (s.unit,) * len(s.labels)))
        units = list(ds.attrs["column_units"]) + [given[x] for x in new]
        ds.attrs["labels"], ds.attrs["column_units"] = self._labels[name], units
        if len(set(units)) != 1 or not units[0]:
            ds.attrs.pop("units", None)

    def close(self, summary: dict, events: list, jsonable) -> None:
        """Write the summary and events attributes and close the file."""
        if self._h5 is None:
            raise ValueError("no state was streamed into the result file")
        self._h5.attrs["summary"] = json.dumps(jsonable(summary))
        self._h5.attrs["events"] = json.dumps(jsonable(events))
        self.abort()

    def abort(self, check: bool = True) -> None:
        """Close the file as it is (after a failure; the caller removes the staged file); raise the
        OSError of a failed write, if any and ``check``."""
        if self._h5 is not None:
            self._h5.close()
            self._h5 = None
        if self._file is not None:
            self._file.close()
            guard, self._file = self._file, None
            if check:
                guard.check()
