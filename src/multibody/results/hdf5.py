"""The layout of a result file (version 2): HDF5 that netCDF-4 readers understand (issue 13 item 4).

::

    /time                 (k,)     dimension scale "time"; units "s", standard_name "time"
    /coordinate           (n,)     dimension scale: the labels of q, v, a and momentum (strings)
    /<name>_label         (c,)     dimension scale: the labels of any other series
    /<name>               (k, c)   dimensions (time, coordinate | <name>_label); attrs units (CF, when all
                                   columns share one), column_units (one per column), long_name, labels
    attrs: format = "multibody-result", version = 2, Conventions = "CF-1.8", summary (JSON), events (JSON)

``xarray.open_dataset(path, engine="h5netcdf")`` then shows ``time`` and the label coordinates; h5py,
h5dump and HDFView read the same datasets. :func:`read` also loads version 1 files (series in the
group /series, labels as attributes).
"""
from __future__ import annotations

import json

import numpy as np

VERSION = 2
#: series whose columns are the model's coordinates share this dimension
COORDINATE_DIM = "coordinate"


def dimension_of(name: str, series, coordinate_names) -> str:
    """The label dimension of a series: ``coordinate`` for per-coordinate series, else ``<name>_label``."""
    return COORDINATE_DIM if tuple(series.labels) == tuple(coordinate_names) else f"{name}_label"


def write(h5, result, jsonable) -> None:
    """Write ``result`` into the open, empty h5py.File ``h5`` (layout above)."""
    import h5py

    h5.attrs["format"], h5.attrs["version"], h5.attrs["Conventions"] = "multibody-result", VERSION, "CF-1.8"
    h5.attrs["summary"] = json.dumps(jsonable(result.summary))
    h5.attrs["events"] = json.dumps(jsonable(result.events))
    time = h5.create_dataset("time", data=np.asarray(result.t, dtype=float))
    time.attrs.update(units="s", standard_name="time", long_name="time", unit="s")
    time.make_scale("time")
    names = result.series["q"].labels if "q" in result.series else ()
    text = h5py.string_dtype()
    for name, s in result.series.items():
        if name in h5:
            raise ValueError(f"series name '{name}' clashes with a dimension of the result file")
        dim = dimension_of(name, s, names)
        if dim not in h5:
            scale = h5.create_dataset(dim, data=np.array(list(s.labels), dtype=object), dtype=text)
            scale.make_scale(dim)
        ds = h5.create_dataset(name, data=np.asarray(s.data, dtype=float).reshape(len(result.t), len(s.labels)))
        ds.dims[0].attach_scale(time)
        ds.dims[1].attach_scale(h5[dim])
        series_attrs(ds, name, s)


def series_attrs(ds, name: str, s) -> None:
    """The attributes of a series' dataset: labels, long_name, column_units and (shared) units."""
    ds.attrs["labels"] = list(s.labels)
    ds.attrs["long_name"] = s.description or name
    units = s.column_units or (s.unit,) * len(s.labels)
    ds.attrs["column_units"] = list(units)
    if len(set(units)) == 1 and units[0]:
        ds.attrs["units"] = units[0]


def read(h5, series_type) -> tuple:
    """(t, {name: Series}, summary, events) from an open h5py.File of either layout."""
    if "series" in h5 and h5.attrs.get("version", 1) == 1:     # version 1: /series/<name>, labels attribute
        items = h5["series"].items()
    else:
        items = [(k, ds) for k, ds in h5.items() if ds.ndim == 2 and k != "time"]
    series = {}
    for name, ds in items:
        labels = tuple(str(x) for x in ds.attrs["labels"])
        units = tuple(str(x) for x in ds.attrs.get("column_units", ()))
        unit = str(ds.attrs.get("units", ds.attrs.get("unit", "")))
        desc = str(ds.attrs.get("long_name", ds.attrs.get("description", "")))
        series[name] = series_type(ds[()], labels, unit, "" if desc == name else desc, units)
    return h5["time"][()], series, json.loads(h5.attrs["summary"]), json.loads(h5.attrs["events"])


# --------------------------------------------------------------------------- units of the columns
_LENGTH = {"x", "y", "z"}
_DIRECTOR = {f"d{i}{a}" for i in "123" for a in "xyz"}


def coordinate_units(names) -> tuple[str, ...]:
    """Units of coordinates from their names: ``*.x/y/z`` (and x, y, z) m, ``*.theta`` rad, director
    components ``*.d1x`` ... "1" (dimensionless); "" (not stated) for any other name (joint angles
    of a chain, matrix systems' own coordinates)."""
    out = []
    for n in names:
        last = n.rsplit(".", 1)[-1]
        out.append("m" if last in _LENGTH else "rad" if last == "theta" else "1" if last in _DIRECTOR else "")
    return tuple(out)


def rate_units(units, order: int) -> tuple[str, ...]:
    """The units of the first (order 1) or second (order 2) time derivative ("" stays "")."""
    per = "s-1" if order == 1 else "s-2"
    return tuple("" if not u else per if u == "1" else f"{u} {per}" for u in units)
