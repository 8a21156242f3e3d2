"""User errors of issue 17 that ended in a traceback or a hang: each is now one message naming the
culprit (exit 2 on the command line), before anything is allocated or written."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from multibody import ModelBuilder, RunOptions, simulate
from multibody.cli import main
from multibody.errors import ModelError, MultibodyError
from multibody.models import MODELS
from multibody.sweep.scenarios import MAX_SCENARIOS, check_scenarios, grid, parse_param, resolve_model

PENDULUM = """
from multibody import ModelBuilder
def pend():
    mb = ModelBuilder("p", gravity=(0.0, -9.81))
    mb.add_point_mass("bob", mass=1.0, position=(1.0, 0.0))
    mb.distance("rod", "ground", "bob", at_a=(0, 0), on_b=(0, 0))
    return mb
"""


def _cli(*args):
    res = CliRunner().invoke(main, list(args))
    assert "Traceback" not in res.output and res.exception is None or isinstance(res.exception, SystemExit)
    return res


@pytest.mark.parametrize("args, words", [
    (["--atol", "1e-320"], "atol"), (["--rtol", "1e-17"], "rtol"),
    (["--integrator", "generalized-alpha", "--step", "1e-300"], "5e+298 steps"),
    (["--integrator", "rk4", "--step", "1e300"], "longer than the run"),
])
def test_options_out_of_range(tmp_path, args, words):
    res = _cli("run", "pendulum", "--t-end", "0.05", "--out", str(tmp_path / "r.h5"), *args)
    assert res.exit_code == 2 and words in res.output
    assert not (tmp_path / "r.h5").exists()


@pytest.mark.parametrize("build, words", [
    ("mb = pend(); mb.force('bob', lambda t, q, v: (1.0, 2.0, 3.0), on=(0, 0)); return mb.build()",
     "force on body 'bob' must return 2 number(s)"),
    ("mb = pend(); mb.force('bob', lambda t, q, v: (0.0, 0.0) if t < 0.01 else 1 / 0, on=(0, 0)); "
     "return mb.build()", "force on body 'bob' raised ZeroDivisionError"),
    ("import sys; sys.exit(0)", "called sys.exit(0)"),
    ("while True: pass", "did not finish within 1 s"),
])
def test_model_file_mistakes(tmp_path, monkeypatch, build, words):
    monkeypatch.setenv("MULTIBODY_USER_TIMEOUT", "1")
    path = tmp_path / "m.py"
    path.write_text(PENDULUM + f"def build():\n    {build}\n")
    res = _cli("run", str(path), "--t-end", "0.05", "--out", str(tmp_path / "r.h5"))
    assert res.exit_code == 2 and words in res.output, res.output
    assert not (tmp_path / "r.h5").exists()


def test_model_file_end_time_and_top_level(tmp_path, monkeypatch):
    monkeypatch.setenv("MULTIBODY_USER_TIMEOUT", "1")
    for top, words in (("T_END = 'abc'", "T_END must be a positive number"), ("while True: pass", "within 1 s"),
                       ("import sys\nsys.exit(3)", "sys.exit(3)")):
        path = tmp_path / "m.py"
        path.write_text(PENDULUM + top + "\ndef build():\n    return pend().build()\n")
        res = _cli("run", str(path), "--out", str(tmp_path / "r.h5"))
        assert res.exit_code == 2 and words in res.output and str(path) in res.output, res.output


def test_sweep_of_a_model_calling_sys_exit_fails_before_the_cluster(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import sys\ndef build(mass=1.0):\n    sys.exit(0)\n")
    with pytest.raises(MultibodyError, match="sys.exit"):
        check_scenarios(resolve_model(str(path)), grid({"mass": [1.0, 2.0]}))


@pytest.mark.parametrize("text, words", [
    ("mass=1:2:100000000000", "COUNT between 1"), ("mass=nan:2:3", "finite"), ("mass=1:2:0", "COUNT between 1")])
def test_sweep_ranges_refused_before_allocation(text, words):
    with pytest.raises(MultibodyError, match=words):
        parse_param(text)


def test_sweep_grid_refused_before_allocation():
    side = [float(i) for i in range(1001)]
    with pytest.raises(MultibodyError, match=f"at most {MAX_SCENARIOS:,}"):
        grid({"a": side, "b": side})
    res = _cli("sweep", "pendulum", "--param", "mass=1:2:1000", "--param", "t_end=1:2:1001", "--out", "never.csv")
    assert res.exit_code == 2 and "1,001,000 scenarios" in res.output


def test_sweep_out_checked_before_the_run(tmp_path):
    res = _cli("sweep", "pendulum", "--param", "mass=1,2", "--out", str(tmp_path / "t.txt"))
    assert res.exit_code == 2 and "--out" in res.output and "t.txt" in res.output


def test_criterion_sweep_bounds():
    res = _cli("criterion", "pendulum", "--sweep", "x", "nan", "1", "3")
    assert res.exit_code == 2 and "--sweep" in res.output


def test_api_errors_name_the_culprit():
    with pytest.raises(ModelError, match="no bodies"):
        ModelBuilder("e").build()
    with pytest.raises(ModelError, match="Bar 'arm'"):
        ModelBuilder("b").add_bar("arm", length=1e308, mass=1.0, position=(0, 0), angle=0.0)
    with pytest.raises(ModelError, match="gravity"):
        ModelBuilder("g", gravity="ab")
    model = MODELS["pendulum"].factory()
    with pytest.raises(MultibodyError, match="max_step"):
        simulate(model, t_end=0.1, options=RunOptions(max_step=float("nan")))
    with pytest.raises(MultibodyError, match="no option 'speedy'"):
        simulate(model, t_end=0.1, formulation="nullspace", formulation_options={"speedy": False})
    simulate(model, t_end=0.1, formulation="nullspace", formulation_options={"fast": False})  # documented
    with pytest.raises(MultibodyError, match="t_end must be a number"):
        simulate(model, t_end="abc")


def test_nan_torque_names_the_body():
    mb = ModelBuilder("t", gravity=(0.0, -9.81))
    mb.add_body("arm", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    mb.revolute("pin", "ground", "arm", at=(0.0, 0.0))
    mb.torque("arm", lambda t, q, v: float("nan") if t > 0.01 else 0.0)
    with pytest.raises(ModelError, match=r"torque on body 'arm' returned a non-finite value .* \(at t = "):
        simulate(mb.build(), t_end=0.05, formulation="projection")


def test_sweep_cluster_is_tls_and_an_empty_scheduler_is_an_error(monkeypatch):
    """The local cluster speaks TLS with temporary credentials: a client without them is turned away.
    A scheduler without workers is an error (it hung before), after CONNECT_TIMEOUT_S."""
    distributed = pytest.importorskip("distributed")
    import logging

    from multibody.sweep import cluster

    with cluster.Cluster(distributed, 1, None) as client:
        address = client.scheduler.address
        assert address.startswith("tls://")
        with pytest.raises((OSError, TimeoutError, TypeError)):
            distributed.Client(address, timeout=2)
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None,
                                  silence_logs=logging.ERROR) as empty:
        with pytest.raises(MultibodyError, match="has no workers"):
            cluster.Cluster(distributed, 1, empty.scheduler_address).__enter__()
    with pytest.raises(MultibodyError, match="--tls-ca-file"):
        cluster.Cluster(distributed, 1, "tls://127.0.0.1:1").__enter__()


def test_user_timeout_keeps_a_callers_timer():
    """run_user_code under an outer SIGALRM timer (a test's or a server's): the outer one still fires."""
    import signal
    import time

    from multibody.io.userfiles import run_user_code

    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(time.monotonic()))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        assert run_user_code(lambda: 3, "x") == 3
        time.sleep(0.6)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert len(fired) == 1



def test_sigterm_inside_build_is_not_the_models_sys_exit(tmp_path):
    """SIGTERM ends the command (exit 128 + 15) even while the model file runs; it is not reported as
    the model calling sys.exit()."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    marker = tmp_path / "building"
    path = tmp_path / "slow.py"
    path.write_text(f"import time\ndef build():\n    open({str(marker)!r}, 'w').close()\n    time.sleep(60)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "multibody", "run", str(path), "--out", str(tmp_path / "r.h5")],
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 60
    while not marker.exists() and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert "sys.exit" not in err and "Traceback" not in err


def test_cli_in_process_restores_signal_handlers():
    """The command line run inside another program (click's runner here) puts back the SIGTERM and
    SIGHUP handlers it found: its own (SystemExit) outlived it and made the fuzz run ignore SIGTERM."""
    import signal

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    assert _cli("models").exit_code == 0
    assert {s: signal.getsignal(s) for s in before} == before


def test_user_code_in_a_worker_thread_has_a_time_limit(monkeypatch):
    """A sweep's Dask worker runs a scenario's build() in a thread, which SIGALRM cannot reach: an endless
    loop there is stopped after MULTIBODY_USER_TIMEOUT seconds (it hung the sweep before); a quick call
    is not hit by a late time-up."""
    import threading
    import time

    from multibody.io.userfiles import run_user_code

    def endless():
        while True:
            pass
    monkeypatch.setenv("MULTIBODY_USER_TIMEOUT", "0.3")
    got = []

    def worker():
        try:
            run_user_code(endless, "model 'loop.py'")
        except MultibodyError as exc:
            got.append(str(exc))
        got.append(run_user_code(lambda: 7, "quick"))
        time.sleep(0.5)
        got.append("no late time-up")
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(20)
    assert not thread.is_alive()
    assert "model 'loop.py' did not finish within 0.3 s" in got[0] and got[1:] == [7, "no late time-up"]


def test_loading_a_file_the_hdf5_library_loops_on(monkeypatch):
    """tests/data/result_hdf5_heap_loop.h5: a result file with 5 + 5 bytes overwritten (the fuzz run's
    case; a damaged global heap) on which reading the attribute 'format' never returned and ignored
    SIGALRM/SIGTERM. The probe in a forked child refuses it after MULTIBODY_LOAD_TIMEOUT seconds."""
    from pathlib import Path

    from multibody.errors import FileFormatError
    from multibody.results.result import Result

    monkeypatch.setenv("MULTIBODY_LOAD_TIMEOUT", "2")
    path = Path(__file__).parent / "data" / "result_hdf5_heap_loop.h5"
    with pytest.raises(FileFormatError, match="result_hdf5_heap_loop.h5"):
        Result.load(path)


@pytest.mark.parametrize("child, words", [("loop", "did not finish within 1 s"), ("crash", "crashed the HDF5")])
def test_probe_refuses_a_hang_or_a_crash(tmp_path, monkeypatch, child, words):
    """The probe's findings, forced: a child that never ends is killed after the limit; one killed by a
    signal (a segfault of the HDF5 library) is reported as such. A sound file passes."""
    import os
    import signal

    import numpy as np

    from multibody.errors import FileFormatError
    from multibody.results import safe_h5
    from multibody.results.result import Result, Series

    t = np.linspace(0.0, 1.0, 3)
    path = tmp_path / "r.h5"
    Result(t, {"q": Series(t[:, None], ("x",), "m")}, {"model": "m"}, []).save(path)
    monkeypatch.setenv("MULTIBODY_LOAD_TIMEOUT", "1")
    assert Result.load(path).t.tolist() == t.tolist()

    def bad(_path, _what):
        if child == "crash":
            import faulthandler

            faulthandler.disable()      # as the real child does: no dump of pytest's handler
            os.kill(os.getpid(), signal.SIGSEGV)
        while True:
            pass
    monkeypatch.setattr(safe_h5, "_probe_child", bad)
    with pytest.raises(FileFormatError, match=words):
        Result.load(path)


def test_endless_loop_in_a_force_of_a_model_file(tmp_path, monkeypatch):
    """A force of a model file that never returns: `run` ends with exit 2 naming the function, its line
    and the file after MULTIBODY_USER_TIMEOUT seconds (it hung, also with --time-limit)."""
    path = tmp_path / "spin.py"
    path.write_text(PENDULUM + "def spin(t, q, v):\n    while t > 0.01:\n        pass\n    return (0.0, 0.0)\n"
                    "def build():\n    mb = pend()\n    mb.force('bob', spin, on=(0, 0))\n    return mb.build()\n")
    monkeypatch.setenv("MULTIBODY_USER_TIMEOUT", "1")
    res = _cli("run", str(path), "--t-end", "0.1", "--out", str(tmp_path / "r.h5"))
    assert res.exit_code == 2
    assert re.search(r"a call of spin\(\) \(line (9|10)\) did not return within 1 s", res.output), res.output
    assert "spin.py" in res.output
    assert not (tmp_path / "r.h5").exists()
