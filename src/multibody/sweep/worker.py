"""Imported once by the fork server of a sweep's local Dask cluster (multibody.sweep.cluster): imports
the scenario code and loads the compiled kernels (numba's cache; compiles and writes it once when it is
stale), so every worker forked from the server starts warm instead of paying ~1 s (or a compile) each.

Importing this module runs a WARM_T_END-second double four-bar; it never raises (a failed warm-up only
means the workers warm up themselves, before the sweep, in :func:`multibody.sweep.cluster.warm_up`).
"""
from __future__ import annotations


def _warm() -> None:
    try:
        from .cluster import warm_up
        from .scenarios import resolve_model

        warm_up(resolve_model("double-four-bar"), {}, {})
    except Exception:  # noqa: BLE001 - an optimisation only: an exception here would kill the fork server
        pass


_warm()
