"""A Result as the scientific-Python containers (issue 13 item 4): an xarray Dataset with a ``time``
coordinate and one label coordinate per series (the dimensions of the result file,
:mod:`multibody.results.hdf5`), a pandas DataFrame indexed by time with (series, label) columns, and a
short text/HTML summary for terminals and notebooks. xarray and pandas are the optional extra ``data``.
"""
from __future__ import annotations

import html

from ..errors import MultibodyError
from .hdf5 import dimension_of

_EXTRA = "pip install 'multibody[data]'"
#: summary entries shown by repr / _repr_html_ (when present)
_SHOWN = ("model", "formulation", "integrator", "backend", "energy_drift_rel", "constraint_violation_max")


def _need(module: str):
    try:
        return __import__(module)
    except ImportError:
        raise MultibodyError(f"this needs {module}, which is not installed: {_EXTRA}") from None


def to_xarray(result):
    """xarray.Dataset: one variable per series, dims (time, coordinate | <name>_label), attrs
    units/column_units/long_name; the summary's scalar entries as dataset attributes."""
    xr = _need("xarray")
    names = result.series["q"].labels if "q" in result.series else ()
    data_vars, coords = {}, {"time": ("time", result.t, {"units": "s", "standard_name": "time"})}
    for name, s in result.series.items():
        dim = dimension_of(name, s, names)
        coords.setdefault(dim, (dim, list(s.labels)))
        units = s.column_units or (s.unit,) * len(s.labels)
        attrs = {"long_name": s.description or name, "column_units": list(units)}
        if len(set(units)) == 1 and units[0]:
            attrs["units"] = units[0]
        data_vars[name] = (("time", dim), s.data.reshape(len(result.t), len(s.labels)), attrs)
    attrs = {k: v for k, v in result.summary.items() if isinstance(v, (str, int, float, bool))}
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)


def to_dataframe(result):
    """pandas.DataFrame indexed by time (repeated at events: the states before and after the jump) with
    columns (series, label): ``df["q"]["slider.x"]``."""
    pd = _need("pandas")
    import numpy as np

    cols = [(name, label) for name, s in result.series.items() for label in s.labels]
    data = np.column_stack([s.data.reshape(len(result.t), len(s.labels)) for s in result.series.values()])
    return pd.DataFrame(data, index=pd.Index(result.t, name="time"),
                        columns=pd.MultiIndex.from_tuples(cols, names=["series", "label"]))


def _facts(result) -> list[tuple[str, str]]:
    s = result.summary
    span = f"{result.t[0]:g} .. {result.t[-1]:g} s" if len(result.t) else "empty"
    facts = [("states", f"{len(result.t)} ({span})")]
    for key in _SHOWN:
        if key in s:
            facts.append((key, f"{s[key]:.3g}" if isinstance(s[key], float) else str(s[key])))
    if result.events:
        facts.append(("events", str(len(result.events))))
    facts.append(("series", ", ".join(f"{n} ({len(x.labels)})" for n, x in result.series.items())))
    return facts


def text(result) -> str:
    """A few lines: states and time span, the main summary entries, the series and their widths."""
    return "Result(" + "\n       ".join(f"{k}: {v}" for k, v in _facts(result)) + ")"


def html_table(result) -> str:
    rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                   f"{html.escape(v)}</td></tr>" for k, v in _facts(result))
    return f"<b>multibody Result</b><table>{rows}</table>"
