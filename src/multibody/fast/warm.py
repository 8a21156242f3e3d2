"""The first run with a cold numba cache (issue 13 item 1): the compiled kernels of :mod:`.kernels`,
:mod:`.step_kernels` and the nullspace formulation's take ~16 s to compile on the 2-core development machine
(more since issue 16), once; numba then loads
them from its on-disk cache (``cache=True``) in well under a second.

:func:`cache_is_cold` says whether some kernel has no usable cache entry (none written yet, or written
for another source file or numba version). What happens then is the policy :func:`cold_start`
chooses: ``"wait"`` (the library's default: compile in this process, with a one-line notice on the
``multibody`` logger) or ``"background"`` (the CLI's: this run takes the NumPy reference path, which
gives the same numbers, while a detached process compiles the kernels and fills the cache for the
next run; the notice says so).
"""
from __future__ import annotations

import logging
import subprocess
import sys
from contextlib import contextmanager

log = logging.getLogger("multibody")

#: the run that fills the cache: a double four-bar through its singular configurations calls every kernel (the
#: nullspace runs past the first crossing, t = 0.714, for the tracker's compiled objective); the four-bar the stored
#: states' SVD multipliers (step_kernels.multipliers); the modified double four-bar generalized-alpha's
#: rank-revealing Newton loop (integrate.generalized_alpha_rank_kernels, redundant rows); the 10-cell N-four-bar the
#: band Schur solve (fast.band) and the compiled Runge-Kutta attempts with it. tests/test_warm_cache.py checks that no kernel is left cold
WARM_SCRIPT = ("from multibody.models import MODELS; from multibody import simulate; "
               "m = MODELS['double-four-bar'].factory(); simulate(m, t_end=10.0); "
               "simulate(MODELS['four-bar'].factory(), t_end=0.05); "
               "[simulate(m, t_end=1.0, formulation='nullspace', formulation_options={'basis': b}) "
               "for b in ('continuation', 'flow')]; from multibody.simulation.options import RunOptions; "
               "[simulate(m, t_end=0.01, options=RunOptions(integrator='generalized-alpha', step=1e-3), "
               "formulation_options={'sparse': s}) for s in (False, True)]; "
               "simulate(MODELS['double-four-bar-modified'].factory(), t_end=0.01, "
               "options=RunOptions(integrator='generalized-alpha', step=1e-3)); "
               "simulate(MODELS['n-four-bar'].factory(cells=10), t_end=0.05)")

_state = {"policy": "wait", "started": False, "announced": False}


@contextmanager
def cold_start(policy: str):
    """Within the context, a cold cache means: ``"wait"``: compile in this process; ``"background"``: use
    the NumPy path for this run and compile in a detached process."""
    if policy not in ("wait", "background"):
        raise ValueError(f"cold-start policy must be 'wait' or 'background', got '{policy}'")
    old, _state["policy"] = _state["policy"], policy
    try:
        yield
    finally:
        _state["policy"] = old


def _dispatchers(extra=()):
    from numba.core.registry import CPUDispatcher

    from . import (band_kernels, entries, kernels, nullspace_kernels, nullspace_rhs_kernels, project_kernels,
                   reaction_kernels, rk_kernels, step_kernels)
    return [f for mod in (kernels, step_kernels, nullspace_kernels, nullspace_rhs_kernels, project_kernels, entries,
                          band_kernels, rk_kernels, reaction_kernels, *extra)
            for f in vars(mod).values() if isinstance(f, CPUDispatcher)]


#: the sets of kernel modules (by name) found warm in this process: their cache stays usable, so a later run does
#: not read every index file again (~2 ms per call, once or twice per simulate(); issue 16: whole runs of small models)
_WARM: set = set()


def cache_is_cold(extra=()) -> bool:
    """True if some kernel (of this package's kernel modules and the modules ``extra``, e.g. the
    generalized-alpha Newton loop's) has no cache entry numba would load (index missing or stale)."""
    key = tuple(sorted(mod.__name__ for mod in extra))
    if key in _WARM:
        return False
    try:
        cold = any(not f._cache._cache_file._load_index() for f in _dispatchers(extra))
    except Exception:       # private numba API changed: assume warm, numba compiles if needed
        return False
    if not cold:
        _WARM.add(key)
    return cold


def use_compiled(extra=()) -> bool:
    """Whether a formulation (or an integrator, with its kernel modules ``extra``) should build its compiled
    path now; announces a cold cache once."""
    return follow_policy(cache_is_cold(extra), _state, WARM_SCRIPT, "kernels")


def follow_policy(cold: bool, state: dict, script: str, what: str) -> bool:
    """The cold-start policy for one set of kernels (``what``, for the notice) whose cache is ``cold`` or not:
    True (compile now or load) or False (NumPy path this run, ``script`` fills the cache in a detached process);
    ``state`` ("started", "announced") makes the process and the notice once per set."""
    if not cold:
        return True
    if _state["policy"] == "background":
        if not state["started"]:
            state["started"] = True
            subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            log.warning(f"compiling {what} in the background (first run only); this run uses the NumPy path")
        return False
    if not state["announced"]:
        state["announced"] = True
        log.warning(f"compiling {what} (first run only)...")
    return True
