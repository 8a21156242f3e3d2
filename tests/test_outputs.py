"""Output files (issue 17): checked before the run, written all or nothing, temporary files removed."""
from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.results import outputs
from multibody.results.result import Result, Series
from multibody.results.tempfiles import sweep_stale


def _result(k=5):
    t = np.linspace(0, 1, k)
    return Result(t, {"q": Series(np.c_[t, 2 * t], ("x", "y"), "m")}, {"model": "m"}, [])


def _run(*args):
    res = CliRunner().invoke(main, ["run", "pendulum", "--t-end", "0.05", *args])
    assert "Traceback" not in res.output
    return res


def _temps(directory: Path):
    return [p for p in directory.iterdir() if ".mbtmp-" in p.name]


@pytest.mark.parametrize("csv, plot", [("afile/x.csv", None), (None, "afile/figs"), (None, "/proc/figs")])
def test_a_bad_second_output_leaves_the_earlier_result_alone(tmp_path, csv, plot):
    """The issue's reproducer: --out existing.h5 with a --csv or --plot that cannot be written."""
    existing = tmp_path / "existing.h5"
    existing.write_bytes(b"earlier result")
    (tmp_path / "afile").write_text("a regular file")
    extra = (["--csv", str(tmp_path / csv)] if csv else []) + \
            (["--plot", plot if plot.startswith("/") else str(tmp_path / plot)] if plot else [])
    res = _run("--out", str(existing), *extra)
    assert res.exit_code == 2
    assert ("--csv" if csv else "--plot") in res.output
    assert existing.read_bytes() == b"earlier result"
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("out, words", [
    ("/dev/null", "must end in"), ("/proc/r.h5", "/proc"), ("/sys/r.h5", "/proc, /sys"),
    ("afile/r.h5", "is a file, not a directory"), ("a" * 300 + ".h5", "303 bytes"), ("adir", "must end in"),
    ("adir.h5", "is a directory"), ("r.csv", "must end in .h5"), ("", "empty")])
def test_output_paths_refused_before_the_run(tmp_path, monkeypatch, out, words):
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("x")
    Path("adir").mkdir()
    Path("adir.h5").mkdir()
    res = _run("--out", out)
    assert res.exit_code == 2
    assert "--out" in res.output and words in res.output


def test_device_behind_a_link_is_never_replaced(tmp_path):
    link = tmp_path / "link.h5"
    link.symlink_to("/dev/null")
    res = _run("--out", str(link))
    assert res.exit_code == 2 and "not a regular file" in res.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_symlink_written_through_and_modes(tmp_path):
    """A link keeps pointing to its target, which gets the new result; an existing file keeps its
    mode; a new file gets 0666 minus the umask."""
    target = tmp_path / "target.h5"
    target.write_bytes(b"old")
    os.chmod(target, 0o664)
    link = tmp_path / "link.h5"
    link.symlink_to(target.name)
    _result().save(link)
    assert link.is_symlink() and os.readlink(link) == target.name
    assert stat.S_IMODE(target.stat().st_mode) == 0o664
    np.testing.assert_array_equal(Result.load(target).t, np.linspace(0, 1, 5))
    old = os.umask(0o027)
    try:
        fresh = _result().save(tmp_path / "new.h5")
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640


def test_disk_full_is_one_clean_error_and_the_earlier_file_stays(tmp_path, monkeypatch):
    path = tmp_path / "r.h5"
    _result(3).save(path)
    before = path.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(outputs.os, "fsync", full)
    with pytest.raises(MultibodyError, match="disk is full"):
        _result(50).save(path)
    with pytest.raises(MultibodyError, match="disk is full"):
        _result(50).to_csv(tmp_path / "r.csv")
    assert path.read_bytes() == before
    assert _temps(tmp_path) == [] and not (tmp_path / "r.csv").exists()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporary_files_are_swept(tmp_path):
    """Files of a killed process (SIGKILL cannot be caught) go at the next check of that path; those of
    a live process and other people's files stay."""
    target = tmp_path / "r.h5"
    dead = tmp_path / f".r.h5.mbtmp-{_dead_pid()}-abcdEFGH.tmp"
    alive = tmp_path / f".r.h5.mbtmp-{os.getppid()}-abcdEFGH.tmp"
    other = tmp_path / ".r.h5.notours"
    legacy_old, legacy_new = tmp_path / ".r.h5.k2j4h5g6.tmp", tmp_path / ".r.h5.q2j4h5g6.tmp"
    for p in (dead, alive, other, legacy_old, legacy_new):
        p.write_bytes(b"x")
    os.utime(legacy_old, (time.time() - 7200, time.time() - 7200))
    outputs.check_file("--out", target, outputs.HDF5_SUFFIXES)
    assert not dead.exists() and not legacy_old.exists()
    assert alive.exists() and other.exists() and legacy_new.exists()
    assert sweep_stale(target) == []


def test_sigterm_during_a_save_removes_the_temporary_file(tmp_path):
    script = textwrap.dedent(f"""
        import time
        from multibody.results.outputs import atomic_write
        from multibody.results.tempfiles import exit_on_signals
        exit_on_signals()
        def slow(tmp):
            open(tmp, "wb").write(b"half")
            time.sleep(30)
        atomic_write({str(tmp_path / 'r.h5')!r}, slow)
        """)
    (tmp_path / "r.h5").write_bytes(b"earlier")
    proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(
        Path(__file__).parents[1] / "src")})
    deadline = time.time() + 30
    while not _temps(tmp_path) and time.time() < deadline:
        time.sleep(0.05)
    assert _temps(tmp_path), "the writer never started"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert _temps(tmp_path) == []
    assert (tmp_path / "r.h5").read_bytes() == b"earlier"


def test_two_options_naming_one_file(tmp_path):
    res = _run("--out", str(tmp_path / "a.h5"), "--csv", str(tmp_path / "a.h5"))
    assert res.exit_code == 2   # .h5 is not a CSV name
    res = CliRunner().invoke(main, ["sweep", "pendulum", "--out", str(tmp_path / "s.csv"),
                                    "--out", str(tmp_path / "s.csv")])
    assert res.exit_code == 2 and "both name" in res.output


def test_all_outputs_written_together(tmp_path):
    res = _run("--out", str(tmp_path / "r.h5"), "--csv", str(tmp_path / "deep" / "r.csv"),
               "--plot", str(tmp_path / "figs"), "--json")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r.h5").is_file() and (tmp_path / "deep" / "r.csv").is_file()
    assert any((tmp_path / "figs").glob("*.png"))
    assert _temps(tmp_path) == [] and _temps(tmp_path / "figs") == []


def test_a_1000_joint_model_saves(tmp_path):
    """Issue 17: a 500-joint model ran but could not be saved (5,000 reaction labels in one HDF5
    attribute, over the 64 KB of the old file format); 1,000 revolute joints: 10,000 labels."""
    from multibody import ModelBuilder, RunOptions, simulate

    mb, prev = ModelBuilder("chain1000", gravity=(0.0, -9.81)), "ground"
    for i in range(1000):
        mb.add_bar(f"b{i}", length=0.1, mass=0.1, position=(0.05 + 0.1 * i, 0.0), angle=0.0)
        mb.revolute(f"j{i}", prev, f"b{i}", at=(0.1 * i, 0.0))
        prev = f"b{i}"
    result = simulate(mb.build(), t_end=1e-3, options=RunOptions(integrator="rk4", step=1e-3))
    back = Result.load(result.save(tmp_path / "chain.h5"))
    assert len(back.series["reactions"].labels) == 10_000
    assert back.series["reactions"].labels == result.series["reactions"].labels
    np.testing.assert_array_equal(back.q, result.q)
