"""Parameter sweeps on Dask (a local cluster or a running scheduler): :func:`sweep` runs the scenarios
(:mod:`.scenarios`) in batches on the workers and gathers one :class:`SweepTable` (one row per scenario;
a failed scenario is a row with status "failed" and its message, the others are kept); the cluster,
the warm-up of its workers and the batch schedule are in :mod:`.cluster`. Dask is the optional extra
``sweep``: ``pip install 'multibody[sweep]'``.
"""
from __future__ import annotations

import itertools
import time

from ..errors import MultibodyError
from .cluster import Cluster, batch_sizes
from .scenarios import ModelSpec, check_scenarios, resolve_model, run_batch
from .table import SweepTable

MISSING_DASK = ("the sweep needs the optional extra 'sweep' (Dask distributed), which is not installed: "
                "pip install 'multibody[sweep]'  (or: pip install 'dask[distributed]').")


def require_dask():
    """Import dask.distributed or raise MultibodyError naming the extra to install."""
    try:
        import distributed
    except ImportError:
        raise MultibodyError(MISSING_DASK) from None
    return distributed


def sweep(model: str | ModelSpec, scenarios: list[dict], *, workers: int = 2, scheduler: str | None = None,
          defaults: dict | None = None, batch_size: int | None = None, progress: bool = False,
          tls: dict | None = None) -> SweepTable:
    """Run the scenarios on Dask and gather them into one table (row order = scenario order).

    ``workers``: size of the local cluster (processes, one thread each) started when no ``scheduler``
    address is given; ``defaults``: run options for every scenario (a scenario's own values win);
    ``batch_size``: scenarios per task (default: batches shrinking towards the end,
    :func:`multibody.sweep.cluster.batch_sizes`); ``tls``: {"ca_file", "cert", "key"} for a TLS scheduler
    (the local cluster always uses temporary TLS credentials). ``meta``: ``startup_s`` (cluster start and the
    workers' warm-up) and ``wall_time_s`` (the scenarios, from the first submission to the last row)."""
    spec = model if isinstance(model, ModelSpec) else resolve_model(model)
    check_scenarios(spec, scenarios)
    distributed = require_dask()
    defaults = dict(defaults or {})
    t0 = time.perf_counter()
    with Cluster(distributed, workers, scheduler, warm=(spec, scenarios[0], defaults), tls=tls) as client:
        startup = time.perf_counter() - t0
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        sizes = batch_sizes(len(scenarios), n_workers, batch_size)
        starts = [0, *itertools.accumulate(sizes)]
        indexed = list(enumerate(scenarios))
        batches = [indexed[a:b] for a, b in zip(starts, starts[1:])]
        t1 = time.perf_counter()
        rows = _gather(distributed, client, spec, batches, defaults, progress, len(scenarios))
        run_wall = time.perf_counter() - t1
    meta = {"model": spec.name, "workers": n_workers, "scheduler": scheduler or "local", "batch_size": max(sizes),
            "batches": len(sizes), "defaults": defaults, "startup_s": startup, "wall_time_s": run_wall}
    return SweepTable.from_rows(rows, meta)


def _gather(distributed, client, spec, batches, defaults, progress, total) -> list[dict]:
    from tqdm import tqdm

    futures = {client.submit(run_batch, spec, b, defaults, pure=False): b for b in batches}
    rows = []
    with tqdm(total=total, unit="scenario", disable=not progress, leave=False) as bar:
        for fut in distributed.as_completed(futures):
            batch = futures[fut]
            try:
                rows.extend(fut.result())
            except Exception as exc:  # a lost worker or unpicklable data: those rows fail, the rest stay
                rows.extend({"scenario": i, **sc, "status": "failed", "error": f"{type(exc).__name__}: {exc}"}
                            for i, sc in batch)
            bar.update(len(batch))
    return rows
