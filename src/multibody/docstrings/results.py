"""Sections of :class:`multibody.Result`, :class:`multibody.Series`, :func:`multibody.sweep.sweep` and
:class:`multibody.sweep.SweepTable`."""
from importlib import import_module

from . import attach
from .runs import _BLOCK

result = import_module("multibody.results.result")
sweep_run = import_module("multibody.sweep.run")
table = import_module("multibody.sweep.table")

#: 1 s of a block on a 45-degree rail, stored at 0, 0.5 and 1 s
_RUN = _BLOCK + """
>>> result = simulate(model, t_end=1.0, options=RunOptions(output_step=0.5),
...                   formulation_options={"fast": False})"""
_PATH = """path : str or os.PathLike
    The file to write (replaced atomically when it exists)."""
_WRITES = f"""Parameters
----------
{_PATH}

Returns
-------
pathlib.Path
    The path written."""
_TMP = """>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()"""

attach(result.Series, {"": """Parameters
----------
data : (k, c) ndarray
    One row per stored time, one column per label.
labels : tuple of str
    Column labels, e.g. coordinate names or constraint row labels.
unit : str, optional
    Unit of all columns.
description : str, optional
    What the series holds.
column_units : tuple of str, optional
    One unit per column (instead of ``unit``), e.g. ("m", "m", "rad").

Examples
--------
>>> import numpy as np
>>> from multibody import Series
>>> s = Series(np.zeros((3, 2)), ("slider.x", "slider.y"), unit="m", description="coordinates")
>>> s.data.shape, s.labels
((3, 2), ('slider.x', 'slider.y'))
"""})

attach(result.Result, {
    "": f"""What :func:`simulate` returns and :meth:`load` reads back.

Parameters
----------
t : (k,) ndarray
    Stored times in s.
series : dict of str to Series
    q, v, a (accelerations), multipliers, energy (kinetic, potential, total), violation (position,
    velocity) and the formulation's own series.
summary : dict
    Run facts: formulation, integrator, tolerances, steps, rejected steps, wall time, energy drift,
    largest constraint violation, singular crossings, backend, final state, ...
events : list of dict
    The event log (time, rows activated or released, velocity jump, impulses).

Examples
--------
{_RUN}
>>> result["q"].shape, result.coordinate_names
((3, 3), ('block.x', 'block.y', 'block.theta'))
""",
    "column": f"""One column of a series.

Parameters
----------
series : str
    Series name, e.g. "q", "v", "multipliers", "energy".
label : str
    Column label, e.g. "slider.x", "P.normal", "total".

Returns
-------
(k,) ndarray
    Its values at the stored times.

Examples
--------
The block's x = g t^2 / 4 at t = 0, 0.5, 1 s:

{_RUN}
>>> result.column("q", "block.x").round(9).tolist()
[0.0, 0.613125, 2.4525]
""",
    "q": "Coordinates (k, n) at the stored times (``result['q']``).",
    "v": "Velocities (k, n) at the stored times (``result['v']``).",
    "coordinate_names": "Names of the n coordinates (the labels of the q series).",
    "to_xarray": """Returns
-------
xarray.Dataset
    One variable per series with dims (time, coordinate or <name>_label), attributes units,
    column_units and long_name; the summary's scalar entries as dataset attributes.

Raises
------
MultibodyError
    If xarray is not installed (``pip install 'multibody[data]'``).
""",
    "to_dataframe": f"""Returns
-------
pandas.DataFrame
    Indexed by time (repeated at events: the states before and after the jump), columns
    (series, label): ``df["q"]["slider.x"]``.

Raises
------
MultibodyError
    If pandas is not installed (``pip install 'multibody[data]'``).

Examples
--------
{_RUN}
>>> frame = result.to_dataframe()
>>> frame[("q", "block.x")].round(9).tolist()
[0.0, 0.613125, 2.4525]
""",
    "save": f"""{_WRITES}

Examples
--------
{_RUN}
>>> from multibody import Result
{_TMP}
>>> path = result.save(Path(folder.name) / "incline.h5")
>>> Result.load(path).column("q", "block.x").round(9).tolist()
[0.0, 0.613125, 2.4525]
>>> folder.cleanup()
""",
    "write_hdf5_to": """Parameters
----------
path : str or os.PathLike
    The file to write.
""",
    "load": """Parameters
----------
path : str or os.PathLike
    A file written by :meth:`save` (or ``multibody run --out``).

Returns
-------
Result
    The result as saved.

Raises
------
FileFormatError
    If the file is not a multibody result file, is damaged, or is refused as unsafe.
""",
    "to_csv": f"""{_WRITES}

Examples
--------
{_RUN}
{_TMP}
>>> path = result.to_csv(Path(folder.name) / "incline.csv")
>>> path.read_text().splitlines()[0].split(",")[:4]
['t', 'q:block.x', 'q:block.y', 'q:block.theta']
>>> folder.cleanup()
""",
    "write_csv_to": """Parameters
----------
path : str or os.PathLike
    The file to write.
""",
})

attach(sweep_run, {"sweep": """Parameters
----------
model : str or ModelSpec
    A built-in model name or model file path, or a resolved :class:`~multibody.sweep.ModelSpec`.
scenarios : list of dict
    One dict of parameters and run options per scenario (e.g. from :func:`multibody.sweep.grid`).
workers : int, optional
    Processes of the local cluster; default 2.
scheduler : str, optional
    Address of a running Dask scheduler instead of a local cluster.
defaults : dict, optional
    Run options for every scenario.
batch_size : int, optional
    Scenarios per task.
progress : bool, optional
    Show progress on stderr.
tls : dict, optional
    {"ca_file", "cert", "key"} for a TLS scheduler.

Returns
-------
SweepTable
    One row per scenario, in scenario order; ``meta`` with the timing.

Raises
------
MultibodyError
    If the model or a scenario is invalid, or Dask is not installed (``pip install 'multibody[sweep]'``).
"""})

_ROWS = """>>> from multibody.sweep import SweepTable
>>> table = SweepTable.from_rows([{"scenario": 1, "k": 20.0, "status": "ok", "q:x": 0.5},
...                               {"scenario": 0, "k": 10.0, "status": "failed", "error": "step collapse"}])"""

attach(table.SweepTable, {
    "": f"""Parameters
----------
columns : list of str
    scenario, the parameters, the measures (status, error, wall and CPU time, steps, ...) and q:NAME.
rows : list of dict
    One dict per scenario.
meta : dict, optional
    Model name, defaults, timing.

Examples
--------
{_ROWS}
>>> len(table), table.columns[:3]
(2, ['scenario', 'k', 'status'])
""",
    "from_rows": f"""Parameters
----------
rows : list of dict
    One dict per scenario, with at least "scenario" (the rows are sorted by it).
meta : dict, optional
    Model name, defaults, timing.

Returns
-------
SweepTable
    The table.

Examples
--------
{_ROWS}
>>> table.column("k")
[10.0, 20.0]
""",
    "column": f"""Parameters
----------
name : str
    A column name.

Returns
-------
list
    Its value in every row (None where missing).

Raises
------
MultibodyError
    If there is no such column (the message lists them).

Examples
--------
{_ROWS}
>>> table.column("status")
['failed', 'ok']
""",
    "failed": "The rows whose status is not \"ok\" (failed scenarios keep their error message).",
    "final_q": """Parameters
----------
row : dict
    A row of the table.

Returns
-------
ndarray
    The q:NAME values in column order, NaN where missing.

Examples
--------
{_ROWS}
>>> [table.final_q(row).tolist() for row in table.rows]
[[nan], [0.5]]
""".replace("{_ROWS}", _ROWS),
    "save": f"""Parameters
----------
{_PATH}
    Its suffix chooses the format: .csv, .h5 or .hdf5.

Returns
-------
pathlib.Path
    The path written.

Raises
------
MultibodyError
    If the suffix is none of those.
""",
    "write_to": """Parameters
----------
path : str or os.PathLike
    The file to write.
suffix : str
    ".csv", ".h5" or ".hdf5".

Raises
------
MultibodyError
    If the suffix is none of those.
""",
    "to_csv": f"""{_WRITES}
""",
    "to_hdf5": f"""Write the table as HDF5 (one dataset per column; :meth:`load` reads it back).

{_WRITES}

Examples
--------
{_ROWS}
{_TMP}
>>> path = table.to_hdf5(Path(folder.name) / "sweep.h5")
>>> SweepTable.load(path).column("k")
[10.0, 20.0]
>>> folder.cleanup()
""",
    "load": """Parameters
----------
path : str or os.PathLike
    A file written by :meth:`to_hdf5` or :meth:`save`.

Returns
-------
SweepTable
    The table.

Raises
------
FileFormatError
    If the file is not a sweep table, is damaged, or is refused as unsafe.
""",
})
