"""The Dask side of a sweep (multibody.sweep.run): the batch schedule, the local cluster, warm workers.

Where a 2-worker sweep on 2 cores lost against 1 worker (measured with ``benchmarks/sweep.py``: 1,000
double four-bar scenarios of 0.3 s, ~7 ms each):

- every fresh worker imports multibody and numba and loads the compiled kernels from numba's cache
  (~1 s, ~7 s when the cache is stale: each worker then compiles) before its first scenario; with 2
  workers this fixed cost does not halve. Here it is paid once, by the fork server the local workers
  are forked from (:data:`PRELOAD_MODULE`), and :func:`warm_up` runs on every worker before the
  clock of the sweep starts: it is reported as cluster start-up, not hidden.
- with equal batches the last one leaves the other worker idle for up to a batch (1/8 of a worker's
  share); :func:`batch_sizes` shrinks the batches towards the end.
- Dask's per-worker statistical profiler samples the computing thread every 10 ms (1 worker, 1,000
  scenarios of 1 s: 5.4-6.0 s without it, 5.9-7.1 s with it), and the 20 ms event-loop ticks and
  monitors of an idle 2-worker cluster take 0.075-0.11 core, which a second worker on 2 cores has to
  share; :data:`LOCAL_CLUSTER_CONFIG` turns them off or down.
"""
from __future__ import annotations

import logging
import math
import multiprocessing
import os
import time

from ..errors import MultibodyError
from .scenarios import run_scenario

#: how long to wait for a scheduler given by address before reporting it unreachable
CONNECT_TIMEOUT_S = 10
#: the largest automatic batch: the scenarios over BATCHES_PER_WORKER x workers (first progress early)
BATCHES_PER_WORKER = 8
#: the smallest automatic batch: the scenarios over TAIL_BATCHES_PER_WORKER x workers; the workers
#: finish within about one such batch of each other (~1/64 of a worker's share)
TAIL_BATCHES_PER_WORKER = 64
#: between those bounds a batch is the remaining scenarios over TAIL_SPLIT x workers (factoring)
TAIL_SPLIT = 2
#: end time of the scenario a worker runs once before the sweep (imports, compiled kernels loaded)
WARM_T_END = 1e-3
#: how the local cluster starts its worker processes where the platform offers it (else Dask's default)
START_METHOD = "forkserver"
#: the module the local workers' fork server imports first (it warms the kernels once, for all workers)
PRELOAD_MODULE = "multibody.sweep.worker"
#: Dask settings of the local cluster: no statistical profiler sampling the scenarios every 10 ms, no
#: active memory manager (a sweep holds no replicated data), slower event-loop ticks and system
#: monitors (they share the cores with the scenarios: with Dask's defaults an idle 2-worker cluster
#: takes 0.075-0.11 core, with these 0.013 core)
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.scheduler.active-memory-manager.start": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
}


def batch_sizes(n: int, workers: int, batch_size: int | None = None) -> list[int]:
    """Scenarios per Dask task, in submission order (sums to ``n``).

    ``batch_size`` given: equal batches. Automatic: factoring (Hummel, Schonberg & Flynn, CACM 35(8),
    1992), a form of guided self-scheduling: each batch takes the remaining count over TAIL_SPLIT x
    workers, clipped to [n / (TAIL_BATCHES_PER_WORKER workers), n / (BATCHES_PER_WORKER workers)]
    (rounded up), so the batches handed out last are small and the workers finish together."""
    if batch_size:
        return [min(batch_size, n - i) for i in range(0, n, batch_size)]
    largest = max(1, math.ceil(n / (workers * BATCHES_PER_WORKER)))
    smallest = max(1, math.ceil(n / (workers * TAIL_BATCHES_PER_WORKER)))
    sizes, left = [], n
    while left:
        size = min(left, max(smallest, min(largest, math.ceil(left / (TAIL_SPLIT * workers)))))
        sizes.append(size)
        left -= size
    return sizes


def warm_up(spec, scenario: dict, defaults: dict) -> dict:
    """Run ``scenario`` for WARM_T_END seconds (imports, model build, compiled kernels loaded); on a
    worker before the sweep. Returns the process id and the time it took (never raises)."""
    t = time.perf_counter()
    run_scenario(spec, -1, {**defaults, **scenario, "t_end": WARM_T_END}, {})
    return {"pid": os.getpid(), "warm_up_s": time.perf_counter() - t}


def security(tls: dict | None):
    """Dask security for a scheduler given by address: ``tls`` = {"ca_file", "cert", "key"} (paths) or
    None (no TLS, a tcp:// scheduler)."""
    if not tls:
        return None
    from distributed import Security

    missing = [k for k in ("ca_file", "cert", "key") if not tls.get(k)]
    if missing:
        raise MultibodyError("TLS to a scheduler needs --tls-ca-file, --tls-cert and --tls-key; missing: "
                             f"{', '.join('--tls-' + k.replace('_', '-') for k in missing)}.")
    for k in ("ca_file", "cert", "key"):
        if not os.path.isfile(tls[k]):
            raise MultibodyError(f"--tls-{k.replace('_', '-')} '{tls[k]}' is not a file.")
    return Security(tls_ca_file=tls["ca_file"], tls_client_cert=tls["cert"], tls_client_key=tls["key"],
                    require_encryption=True)


def local_security():
    """Temporary TLS credentials for the local cluster (Dask's Security.temporary(): a fresh self-signed
    CA and key in memory, shared by this client, the scheduler and the workers): another local process
    cannot connect to the scheduler or the workers and run code there."""
    from distributed import Security

    try:
        return Security.temporary()
    except ImportError:
        raise MultibodyError("the local sweep cluster is secured with temporary TLS credentials, which need "
                             "the package 'cryptography': pip install 'multibody[sweep]'.") from None


class Cluster:
    """Context manager: a Client on a fresh LocalCluster (processes, one thread each; TLS with temporary
    credentials, :func:`local_security`) or on a running scheduler at ``scheduler`` (``tls``: certificate
    files, :func:`security`; at least one worker within CONNECT_TIMEOUT_S); every worker warmed up
    (:func:`warm_up`) on entry; closed on exit."""

    def __init__(self, distributed, workers: int, scheduler: str | None, warm: tuple | None = None,
                 tls: dict | None = None):
        self.d, self.workers, self.scheduler, self.warm, self.tls = distributed, workers, scheduler, warm, tls
        self.cluster = self.client = None

    def _connect(self):
        sec = security(self.tls)
        if sec is None and self.scheduler.startswith("tls://"):
            raise MultibodyError(f"the scheduler '{self.scheduler}' speaks TLS: give --tls-ca-file, --tls-cert "
                                 "and --tls-key.")
        try:
            self.client = self.d.Client(self.scheduler, timeout=CONNECT_TIMEOUT_S, security=sec)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise MultibodyError(f"cannot reach the Dask scheduler at '{self.scheduler}' within "
                                 f"{CONNECT_TIMEOUT_S} s: {' '.join(str(exc).split())}") from None
        try:
            self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            self.client.close()
            raise MultibodyError(f"the Dask scheduler at '{self.scheduler}' has no workers (none joined within "
                                 f"{CONNECT_TIMEOUT_S} s): start some with 'dask worker {self.scheduler}'.") from None

    def __enter__(self):
        if self.scheduler:
            self._connect()
        else:
            self._start_local()
        if self.warm is not None:
            try:
                self.client.run(warm_up, *self.warm, on_error="ignore")
            except Exception:  # noqa: BLE001 - an optimisation only: e.g. unpicklable model; the sweep
                pass           # then reports the failure in the rows of the scenarios
        return self.client

    def _start_local(self):
        import dask

        if not (isinstance(self.workers, int) and self.workers >= 1):
            raise MultibodyError(f"the number of workers must be a positive integer, got {self.workers}.")
        config = dict(LOCAL_CLUSTER_CONFIG)
        if START_METHOD in multiprocessing.get_all_start_methods():
            config["distributed.worker.multiprocessing-method"] = START_METHOD
        with dask.config.set(config):
            _preload_fork_server()
            self.cluster = self.d.LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                               dashboard_address=None, silence_logs=logging.ERROR,
                                               security=local_security())
            self.client = self.d.Client(self.cluster)

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _preload_fork_server() -> None:
    """Let the fork server (started with the first worker) import distributed and PRELOAD_MODULE, so the
    workers forked from it start with warm kernels. No effect when the server already runs (it is then
    warm from an earlier sweep) or with another start method. The server starts with the first worker,
    after the Nanny has set the workers' thread limits (OMP_NUM_THREADS=1, ...) in this process: the
    forked workers inherit them."""
    import dask
    from distributed.utils import get_mp_context

    ctx = get_mp_context()
    if dask.config.get("distributed.worker.multiprocessing-method") != "forkserver":
        return
    ctx.set_forkserver_preload(["distributed", PRELOAD_MODULE])
