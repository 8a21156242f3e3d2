"""Sweeps on a real local Dask cluster (2 worker processes): gathered results equal serial runs, a failed
scenario keeps its row and the others, locking times as parameters, the command line end to end."""
from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from multibody import RunOptions, simulate
from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.simulation.events import lock_at
from multibody.models import MODELS
from multibody.models.four_bars import crank_angle_exact
from multibody.sweep import grid, parse_param, resolve_model, run_serial, sweep
from multibody.sweep.table import SweepTable

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def scheduler():
    """One small local cluster shared by the API tests (started once: ~3 s)."""
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


def test_gathered_results_equal_serial_runs(scheduler, tmp_path):
    scenarios = grid({"omega0": [-1.0, -2.0], "t_end": [0.3, 0.5], "rtol": [1e-8]})
    table = sweep("double-four-bar", scenarios, scheduler=scheduler, batch_size=1)
    assert [r["scenario"] for r in table.rows] == list(range(4))
    assert table.meta["workers"] == 2 and not table.failed
    model_names = MODELS["double-four-bar"].factory().coordinate_names
    for row, sc in zip(table.rows, scenarios):
        assert {k: row[k] for k in sc} == sc
        serial = simulate(MODELS["double-four-bar"].factory(omega0=sc["omega0"]), t_end=sc["t_end"],
                          options=RunOptions(rtol=sc["rtol"]))
        np.testing.assert_array_equal(table.final_q(row), serial.summary["final_q"])   # identical, bit for bit
        assert row["steps"] == serial.summary["steps"]
        # physics: the cranks follow the exact 1-DOF reduction (tolerance: 1e4 x rtol, a global-error bound)
        exact = crank_angle_exact(sc["t_end"], omega0=sc["omega0"])[0]
        assert abs(row["q:bar1.theta"] - exact) < 1e-4
    assert [c for c in table.columns if c.startswith("q:")] == [f"q:{n}" for n in model_names]
    back = SweepTable.load(table.save(tmp_path / "s.h5"))
    assert back.columns == table.columns
    np.testing.assert_array_equal(back.final_q(back.rows[3]), table.final_q(table.rows[3]))


def test_failed_scenario_is_reported_and_others_kept(scheduler):
    scenarios = grid({"mass": [1.0, -1.0, 2.0], "t_end": [0.4]}) + [{"mass": 1.0, "rtol": -1.0}]
    table = sweep("pendulum", scenarios, scheduler=scheduler)
    status = [r["status"] for r in table.rows]
    assert status == ["ok", "failed", "ok", "failed"]
    assert "mass must be a positive number" in table.rows[1]["error"] and "rtol" in table.rows[3]["error"]
    ok = [table.final_q(table.rows[i]) for i in (0, 2)]
    for q in ok:   # on the circle of radius 1 (the constraint, projected every step)
        assert abs(q @ q - 1.0) < 1e-8
    # physics: a pendulum's motion does not depend on its mass
    np.testing.assert_allclose(ok[0], ok[1], rtol=0, atol=1e-10)


def test_locking_times_are_parameters(scheduler):
    scenarios = grid({"lock:q2": [0.2, 0.3], "t_end": [0.5]})
    table = sweep("three-r-pendulum-locking", scenarios, scheduler=scheduler)
    assert not table.failed
    model = MODELS["three-r-pendulum-locking"].factory()
    for row, sc in zip(table.rows, scenarios):
        # the model's own q2 lock (0.8 s) is replaced; its q3 lock (1.3 s) lies after t_end
        serial = simulate(model, t_end=0.5, events=(lock_at(sc["lock:q2"], "q2"), lock_at(1.3, "q3")))
        np.testing.assert_array_equal(table.final_q(row), serial.summary["final_q"])
    assert table.rows[0]["q:q2"] != table.rows[1]["q:q2"]


def test_initial_rate_parameter(scheduler):
    """v0:bar1.theta = -2 (other rates made consistent) is the double four-bar started at omega0 = -2."""
    scenarios = [{"v0:bar1.theta": -2.0, "t_end": 0.5, "rtol": 1e-8}]
    row = sweep("double-four-bar", scenarios, scheduler=scheduler).rows[0]
    assert row["status"] == "ok"
    assert abs(row["q:bar1.theta"] - crank_angle_exact(0.5, omega0=-2.0)[0]) < 1e-4
    assert abs(row["q:bar5.theta"] - row["q:bar1.theta"]) < 1e-8   # the cranks stay parallel


@pytest.mark.parametrize("text, parsed", [("omega0=-1,-2", ("omega0", [-1, -2])),
                                          ("integrator=dop853,dopri5", ("integrator", ["dop853", "dopri5"])),
                                          ("x=0:1:3", ("x", [0.0, 0.5, 1.0]))])
def test_parse_param(text, parsed):
    assert parse_param(text) == parsed


@pytest.mark.parametrize("text", ["omega0", "=1", "omega0=", "a=1,,2", "a=x:1:3"])
def test_parse_param_malformed(text):
    with pytest.raises(MultibodyError, match="malformed"):
        parse_param(text)


def test_cli_end_to_end(tmp_path):
    csv_path, h5_path = tmp_path / "p.csv", tmp_path / "p.h5"
    entry = [sys.executable, "-c", "from multibody.cli import main; main()"]   # as the installed script
    args = ["sweep", "pendulum", "--param", "mass=1,-1", "--param", "angle=0,-0.5", "--t-end", "0.2",
            "--workers", "2", "--out", str(csv_path), "--out", str(h5_path), "--json"]
    proc = subprocess.run(entry + args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["scenarios"], out["ok"], out["failed"], out["workers"]) == (4, 2, 2, 2)
    rows = list(csv.DictReader(csv_path.open()))
    assert [r["status"] for r in rows] == ["ok", "ok", "failed", "failed"]
    assert [float(r["angle"]) for r in rows] == [0, -0.5, 0, -0.5]
    assert len(SweepTable.load(h5_path)) == 4


@pytest.mark.parametrize("args, message", [
    (["sweep", "double-four-bar", "--param", "length=1,2"], "has no parameter 'length'"),
    (["sweep", "double-four-bar", "--param", "omega0"], "malformed --param"),
    (["sweep", "pendulum", "--param", "q0:y=1"], "has no coordinate 'y'"),
    (["sweep", "no-such-model"], "unknown model"),
    (["sweep", "pendulum", "--scheduler", "tcp://127.0.0.1:9"], "cannot reach the Dask scheduler"),
])
def test_cli_bad_input(args, message, tmp_path, monkeypatch):
    monkeypatch.setattr("multibody.sweep.cluster.CONNECT_TIMEOUT_S", 1)
    res = CliRunner().invoke(main, args + ["--out", str(tmp_path / "x.csv")])
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output


def test_table_save_rejects_unknown_suffix(tmp_path):
    table = SweepTable.from_rows([{"scenario": 0, "status": "ok"}])
    with pytest.raises(MultibodyError, match=".csv, .h5"):
        table.save(tmp_path / "x.txt")


def test_resolve_model_file_with_parameters(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from multibody.models.pendulums import pendulum\n"
                    "def build(*, length=1.0):\n    return pendulum(length=length)\n")
    spec = resolve_model(str(path))
    assert spec.factory(length=2.0).q0[0] == 2.0


def test_missing_extra_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)   # import distributed -> ImportError
    res = CliRunner().invoke(main, ["sweep", "pendulum", "--param", "mass=1,2", "--out", str(tmp_path / "x.csv")])
    assert res.exit_code == 2 and "pip install 'multibody[sweep]'" in res.output
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("n, workers", [(1000, 2), (1000, 1), (10, 2), (1, 4), (100_000, 3)])
def test_batch_schedule_shrinks_towards_the_end(n, workers):
    """Factoring: every scenario in exactly one batch, batches never grow, none above n / (8 workers)
    nor (but the remainder) below n / (64 workers), and the last 2 x workers batches are the smallest."""
    from multibody.sweep.cluster import BATCHES_PER_WORKER, TAIL_BATCHES_PER_WORKER, batch_sizes

    sizes = batch_sizes(n, workers)
    largest, smallest = -(-n // (workers * BATCHES_PER_WORKER)), -(-n // (workers * TAIL_BATCHES_PER_WORKER))
    assert sum(sizes) == n and all(a >= b for a, b in zip(sizes, sizes[1:]))
    assert max(sizes) <= largest and min(sizes[:-1], default=smallest) >= smallest
    assert all(s <= max(smallest, 1) for s in sizes[-2 * workers:-1])
    assert batch_sizes(10, 2, batch_size=4) == [4, 4, 2]


def test_local_cluster_results_equal_serial_runs():
    """The default path (a local cluster, workers forked from a warm server, shrinking batches): the same
    numbers as one process running the scenarios one after the other, bit for bit."""
    scenarios = grid({"omega0": [-1.0, -1.5, -2.0], "t_end": [0.2, 0.4], "rtol": [1e-8]})
    table = sweep("double-four-bar", scenarios, workers=2)
    serial = run_serial(resolve_model("double-four-bar"), scenarios)
    assert table.meta["workers"] == 2 and table.meta["batches"] == len(scenarios) and not table.failed
    for row, ref in zip(table.rows, serial.rows):
        np.testing.assert_array_equal(table.final_q(row), serial.final_q(ref))
        assert (row["steps"], row["rhs_evaluations"]) == (ref["steps"], ref["rhs_evaluations"])


def test_local_cluster_workers_start_warm():
    """The local workers are forked from a server that imported multibody and the compiled kernels, run with
    one BLAS thread, and have run the first scenario before the sweep's clock starts."""
    from multibody.sweep.cluster import Cluster

    def state():
        import os
        return sys.modules.get("multibody.fast.kernels") is not None, os.environ.get("OPENBLAS_NUM_THREADS")

    spec = resolve_model("double-four-bar")
    with Cluster(distributed, 2, None, warm=(spec, {"omega0": -1.0}, {})) as client:
        states = list(client.run(state).values())
    assert states == [(True, "1"), (True, "1")]


def test_sweep_refuses_a_text_value_for_a_numeric_parameter_and_fails_when_every_scenario_fails(tmp_path):
    """`--param mass=abc` names the parameter before any scenario runs; a sweep whose scenarios all fail (every
    mass negative) writes its table of errors and exits non-zero (issue 13 item 11, issue 17)."""
    from click.testing import CliRunner
    from multibody.cli import main
    out = CliRunner().invoke(main, ["sweep", "pendulum", "--param", "mass=abc", "--out", str(tmp_path / "a.csv")])
    assert out.exit_code == 2 and "parameter 'mass'" in out.output and "'abc'" in out.output
    assert not (tmp_path / "a.csv").exists()
    out = CliRunner().invoke(main, ["sweep", "pendulum", "--param", "mass=-1,-2", "--workers", "1",
                                    "--out", str(tmp_path / "b.csv")])
    assert out.exit_code == 2 and "every scenario of the sweep failed" in out.output
    assert (tmp_path / "b.csv").exists()
