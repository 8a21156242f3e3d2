"""Parameter sweeps: scenarios (:mod:`.scenarios`), their run on Dask (:mod:`.run`, :mod:`.cluster`,
:mod:`.worker`) and the result table (:mod:`.table`). Re-exports only."""
from .run import MISSING_DASK, require_dask, sweep
from .scenarios import ModelSpec, grid, parse_param, resolve_model, run_scenario, run_serial
from .table import SweepTable

__all__ = ["MISSING_DASK", "ModelSpec", "SweepTable", "grid", "parse_param", "require_dask", "resolve_model",
           "run_scenario", "run_serial", "sweep"]
