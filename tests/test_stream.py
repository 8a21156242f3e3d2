"""Streaming a run into its result file (issue 17): the same file as an in-memory run, an earlier file
untouched by a failing run, memory independent of the number of blocks."""
import errno
import json
import tracemalloc

import numpy as np
import pytest

from multibody.models import MODELS
from multibody.results.outputs import atomic_write
from multibody.results.result import Result
from multibody.results.stream import ResultStream
from multibody.simulation.driver import RunOptions, simulate
from multibody.simulation.events import impulse_at, lock_at, rate_crosses_zero, release_at


@pytest.mark.parametrize("name,t_end", [("double-four-bar", 3.0), ("slider-crank", 20.0)])
def test_streamed_file_equals_in_memory_result(tmp_path, name, t_end):
    model = MODELS[name].factory()
    options = RunOptions(rtol=1e-8, atol=1e-10)     # many small blocks of 7 states
    ref = simulate(model, t_end=t_end, options=options)
    stream = ResultStream(tmp_path / "r.h5", chunk=7)
    out = simulate(model, t_end=t_end, options=options, stream=stream)
    back = Result.load(tmp_path / "r.h5")
    assert len(out.t) == 0 and stream.states == len(ref.t) > 3 * 7
    assert np.array_equal(back.t, ref.t)
    assert set(back.series) == set(ref.series)
    for key, s in ref.series.items():
        assert back.series[key].labels == s.labels
        assert np.array_equal(back[key], s.data, equal_nan=True), key
    for key in ("energy_drift_rel", "constraint_violation_max", "velocity_violation_max", "final_q", "steps",
                "energy_balance_rel", "non_unique_reactions"):
        assert out.summary.get(key) == ref.summary.get(key) == back.summary.get(key), key


class FullDisk(ResultStream):
    """A stream whose disk fills up at the third block."""

    def append(self, t, series):
        if self.states >= 2 * self.chunk:
            raise OSError(errno.ENOSPC, "No space left on device")
        super().append(t, series)


def test_failing_streamed_run_leaves_earlier_file(tmp_path):
    model = MODELS["pendulum"].factory()
    path = tmp_path / "r.h5"
    path.write_bytes(b"earlier result")
    with pytest.raises(Exception, match="disk is full"):
        atomic_write(path, lambda tmp: simulate(model, t_end=1.0, stream=FullDisk(tmp, chunk=4)), "--out")
    assert path.read_bytes() == b"earlier result"
    assert [p.name for p in tmp_path.iterdir()] == ["r.h5"]      # no temporary left


class _Budget:
    """A raw file that takes ``left`` bytes, then fails as a full disk does."""

    def __init__(self, f, left):
        self.f, self.left = f, left

    def write(self, data):
        n = memoryview(data).nbytes
        if n > self.left:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.left -= n
        return self.f.write(data)

    def __getattr__(self, name):
        return getattr(self.f, name)


def test_disk_full_under_the_hdf5_library_is_one_clean_error(tmp_path, monkeypatch):
    """The disk fills up while the HDF5 library writes the streamed file (not between blocks): one
    'disk is full' error, the earlier file intact, no temporary (it was two tracebacks and a segfault at
    exit, 139: the library failed again while closing)."""
    from multibody.results.stream import GuardedFile

    real = GuardedFile.__init__

    def small_disk(self, path):
        real(self, path)
        self.f = _Budget(self.f, 20_000)
    monkeypatch.setattr(GuardedFile, "__init__", small_disk)
    path = tmp_path / "r.h5"
    path.write_bytes(b"earlier result")
    with pytest.raises(Exception, match="disk is full"):
        atomic_write(path, lambda tmp: simulate(MODELS["pendulum"].factory(), t_end=1.0,
                                                options=RunOptions(output_step=1e-3),
                                                stream=ResultStream(tmp, chunk=64)), "--out")
    assert path.read_bytes() == b"earlier result"
    assert [p.name for p in tmp_path.iterdir()] == ["r.h5"]


def _peak(tmp_path, t_end) -> tuple[int, int]:
    model = MODELS["pendulum"].factory()
    options = RunOptions(output_step=2e-3)
    stream = ResultStream(tmp_path / f"{t_end}.h5", chunk=16)
    tracemalloc.start()
    simulate(model, t_end=t_end, options=options, stream=stream)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, stream.states


def test_memory_does_not_grow_with_the_number_of_blocks(tmp_path):
    _peak(tmp_path, 0.1)      # compiled kernels, caches and HDF5's first allocations out of the count
    small, n_small = _peak(tmp_path, 0.25)
    large, n_large = _peak(tmp_path, 2.0)
    assert n_large >= 8 * n_small - 8
    # in memory 8x the states take ~8x the memory of the series; streamed the peak stays (measured:
    # 326,622 and 326,606 bytes)
    assert large < 1.1 * small + 50_000, (small, large)


def test_cli_stream_writes_the_same_result_and_keeps_the_earlier_file_on_failure(tmp_path):
    from click.testing import CliRunner

    from multibody.cli import main

    runner = CliRunner()
    args = ["run", "double-four-bar", "--t-end", "2"]
    ok = runner.invoke(main, [*args, "--out", str(tmp_path / "m.h5")])
    streamed = runner.invoke(main, [*args, "--stream", "--out", str(tmp_path / "s.h5"), "--csv",
                                    str(tmp_path / "s.csv")])
    assert ok.exit_code == streamed.exit_code == 0, streamed.output
    a, b = Result.load(tmp_path / "m.h5"), Result.load(tmp_path / "s.h5")
    assert np.array_equal(a.t, b.t) and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a.series)
    assert len((tmp_path / "s.csv").read_text().splitlines()) == len(a.t) + 1
    # a failing streamed run (bad --event found before the run) leaves the earlier file unchanged
    before = (tmp_path / "s.h5").read_bytes()
    bad = runner.invoke(main, [*args, "--stream", "--event", "lock@1:nothing", "--out", str(tmp_path / "s.h5")])
    assert bad.exit_code == 2 and "nothing" in bad.output
    assert (tmp_path / "s.h5").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.h5", "s.csv", "s.h5"]


def _same_file(a: Result, b: Result) -> None:
    """Two loaded result files hold the same arrays, labels, units, descriptions, summary and events."""
    assert np.array_equal(a.t, b.t)
    assert set(a.series) == set(b.series)
    for key, s in a.series.items():
        t = b.series[key]
        assert (t.labels, t.unit, t.column_units, t.description) == (s.labels, s.unit, s.column_units,
                                                                     s.description), key
        assert np.array_equal(t.data, s.data, equal_nan=True), key
    drop = ("wall_time_s", "streamed_states")
    assert {k: v for k, v in a.summary.items() if k not in drop} == {k: v for k, v in b.summary.items()
                                                                      if k not in drop}
    assert a.events == b.events


EVENT_RUNS = {     # paper 002: a lock (rows appear), a release (rows leave), an impulse (U != 0), a state event
    "lock-release-impulse": ("three-r-pendulum-locking", "lagrange", 2.0, RunOptions(rtol=1e-8, atol=1e-10),
                             lambda m: (lock_at(0.8, "q2"), release_at(1.3, "q2"), impulse_at(1.5, q1=0.5))),
    "rate-crosses-zero": ("three-r-pendulum-locking", "lagrange", 2.0, RunOptions(output_step=0.01),
                          lambda m: (rate_crosses_zero(m, "q3"),)),
    "event-at-the-end": ("three-r-pendulum-locking", "lagrange", 0.5, RunOptions(rtol=1e-8, atol=1e-10),
                         lambda m: (lock_at(0.5, "q2"),)),
    # the tangent basis T loses its column at the lock and gets it back at the release
    "nullspace-channels": ("double-four-bar", "nullspace", 1.0, RunOptions(rtol=1e-8, atol=1e-10),
                           lambda m: (lock_at(0.3, "bar1.theta"), release_at(0.6, "bar1.theta"))),
}


@pytest.mark.parametrize("case", list(EVENT_RUNS))
def test_streamed_run_with_events_equals_in_memory_result(tmp_path, case):
    """Segments with different constraint sets stream into one file: every series, label, unit, the
    summary and the event log equal those of the in-memory run saved to a file (blocks of 5 states)."""
    name, formulation, t_end, options, events = EVENT_RUNS[case]
    model = MODELS[name].factory()
    kw = dict(t_end=t_end, options=options, formulation=formulation, events=events(model))
    simulate(model, **kw).save(tmp_path / "m.h5")
    stream = ResultStream(tmp_path / "s.h5", chunk=5)
    out = simulate(model, stream=stream, **kw)
    ref, back = Result.load(tmp_path / "m.h5"), Result.load(tmp_path / "s.h5")
    assert len(out.t) == 0 and stream.states == len(ref.t) > 4 * 5
    assert len(ref.events) == len(kw["events"]) and out.summary["segments"] == len(ref.events) + 1
    _same_file(ref, back)
    assert out.events == ref.events
    if formulation == "nullspace":      # dof 1 -> 0 -> 1: no basis column while locked (NaN in the file)
        gap = np.isnan(back["T"]).all(axis=1)
        assert gap.any() and np.all((back.t[gap] >= 0.3) & (back.t[gap] <= 0.6))
        assert not np.isnan(back["T"][~gap]).any()


def test_cli_streams_a_model_with_events(tmp_path):
    """``run --stream`` of a model with its own locking events (paper 002 Fig. 1) writes the file the
    in-memory run writes."""
    from click.testing import CliRunner

    from multibody.cli import main

    runner = CliRunner()
    args = ["run", "three-r-pendulum-locking", "--t-end", "1.5", "--event", "impulse@1.2:q1=0.5"]
    ok = runner.invoke(main, [*args, "--out", str(tmp_path / "m.h5")])
    streamed = runner.invoke(main, [*args, "--stream", "--out", str(tmp_path / "s.h5")])
    assert ok.exit_code == streamed.exit_code == 0, streamed.output
    _same_file(Result.load(tmp_path / "m.h5"), Result.load(tmp_path / "s.h5"))


def test_cli_streams_automatically_when_the_run_will_store_many_states(tmp_path, monkeypatch):
    """``run`` streams without --stream when the states to store are known to reach AUTO_STREAM_STATES
    (here lowered to 100: --output-step 0.01 over 2 s stores 201); --no-stream keeps them in memory; an
    adaptive run without output times (count unknown before the run) is not streamed. Same file each way."""
    from click.testing import CliRunner

    from multibody.cli import main, run as run_module
    from multibody.simulation.options import RunOptions as Options

    monkeypatch.setattr(run_module, "AUTO_STREAM_STATES", 100)
    assert run_module.expected_states(Options(output_step=0.01), 2.0) == 201
    assert run_module.expected_states(Options(integrator="rk4", step=1e-3, output_interval=0.1), 2.0) == 21
    assert run_module.expected_states(Options(), 2.0) is None
    runner = CliRunner()
    outs = {}
    for flag in ("", "--no-stream"):
        path = tmp_path / f"r{flag}.h5"
        res = runner.invoke(main, ["run", "pendulum", "--t-end", "2", "--output-step", "0.01", "--json",
                                   "--out", str(path), *([flag] if flag else [])])
        assert res.exit_code == 0, res.output
        outs[flag] = json.loads(res.output.strip().splitlines()[-1])
    assert outs[""]["streamed_states"] == 201 and "streamed_states" not in outs["--no-stream"]
    _same_file(Result.load(tmp_path / "r--no-stream.h5"), Result.load(tmp_path / "r.h5"))
    res = runner.invoke(main, ["run", "pendulum", "--t-end", "2", "--json", "--out", str(tmp_path / "a.h5")])
    assert res.exit_code == 0 and "streamed_states" not in res.output


def test_an_output_step_asking_for_more_states_than_can_be_stored_is_refused_before_the_run():
    from multibody.errors import MultibodyError
    from multibody.simulation.options import MAX_OUTPUT_STATES

    model = MODELS["pendulum"].factory()
    for step in (2.0 / MAX_OUTPUT_STATES, 1e-320):
        with pytest.raises(MultibodyError, match="at most 1e\\+08 can be stored"):
            simulate(model, t_end=2.0, options=RunOptions(output_step=step))


def test_a_run_over_its_time_limit_stops_naming_time_and_cause(tmp_path):
    """RunOptions.time_limit / --time-limit: a run still going after the limit stops loudly (the time
    reached, the limit, the steps) instead of crawling on; the earlier file stays."""
    from click.testing import CliRunner

    from multibody.cli import main
    from multibody.errors import MultibodyError, SimulationError

    model = MODELS["double-four-bar"].factory()
    with pytest.raises(SimulationError, match=r"at t = .*the time limit of 1e-09 s .* was reached after 1 steps"):
        simulate(model, t_end=1.0, options=RunOptions(time_limit=1e-9))
    with pytest.raises(MultibodyError, match="time_limit .* must be a positive number"):
        simulate(model, t_end=1.0, options=RunOptions(time_limit=0.0))
    (tmp_path / "r.h5").write_bytes(b"earlier")
    res = CliRunner().invoke(main, ["run", "pendulum", "--time-limit", "1e-9", "--stream", "--out",
                                    str(tmp_path / "r.h5")])
    assert res.exit_code != 0 and "time limit" in res.output and "Traceback" not in res.output
    assert (tmp_path / "r.h5").read_bytes() == b"earlier" and [p.name for p in tmp_path.iterdir()] == ["r.h5"]
