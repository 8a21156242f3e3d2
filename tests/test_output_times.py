"""Output times (issue 13 item 3): the series are sampled from the dense output at exactly the requested
times; checked against the closed form of the driven slider-crank (Nikravesh 1988 Sect. 4.6):
crank angle phi = phi0 + omega t, slider x_s = r cos phi + sqrt(l^2 - r^2 sin^2 phi)."""
import numpy as np
import pytest
from click.testing import CliRunner

from multibody import RunOptions, simulate
from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.models.linkages import slider_crank, slider_position
from multibody.simulation.events import lock_at


def test_output_step_gives_exact_times_and_the_closed_form():
    r = simulate(slider_crank(), t_end=1.0, options=RunOptions(rtol=1e-9, atol=1e-11, output_step=0.01))
    t = r.t
    assert len(t) == 101 and np.array_equal(t, np.arange(101) * 0.01)
    phi = np.pi / 3 + 2 * np.pi * t
    # zero degrees of freedom: each sample projected onto Phi(q, t) = 0 is the closed form up to the
    # projection's tolerance (Newton to round-off), whatever the interpolant's error
    assert np.max(np.abs(r.column("q", "slider.x") - slider_position(phi))) < 1e-10
    assert np.max(np.abs(r.column("q", "crank.theta") - phi)) < 1e-10


def test_explicit_times_and_events_still_recorded():
    times = (0.05, 0.2, 0.35, 0.5)
    from multibody.models import MODELS

    entry = MODELS["three-r-pendulum-locking"]
    r = simulate(entry.factory(), t_end=0.5, options=RunOptions(output_times=times), events=entry.events)
    ev = [e["t"] for e in r.events if "energy_before" in e]
    expected = sorted(list(times) + 2 * [x for x in ev if x < 0.5])
    assert np.allclose(r.t, expected, rtol=0, atol=1e-12)
    assert set(times) <= set(r.t.tolist())


@pytest.mark.parametrize("opts, words", [
    (dict(output_times=(0.2, 0.1)), "strictly increasing"),
    (dict(output_times=(0.1, 2.0)), "must lie in"),
    (dict(output_step=-0.1), "positive"),
    (dict(output_step=0.1, output_times=(0.1,)), "not both"),
    (dict(integrator="generalized-alpha", step=1e-3, output_step=0.1), "dense output"),
])
def test_bad_output_times_are_named(opts, words):
    with pytest.raises(MultibodyError, match=words):
        simulate(slider_crank(), t_end=1.0, options=RunOptions(**opts))


def test_cli_output_times(tmp_path):
    out = tmp_path / "r.h5"
    res = CliRunner().invoke(main, ["run", "slider-crank", "--output-times", "0,0.25,0.5,1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    from multibody import Result

    assert Result.load(out).t.tolist() == [0.0, 0.25, 0.5, 1.0]
    bad = CliRunner().invoke(main, ["run", "slider-crank", "--output-times", "0,x"])
    assert bad.exit_code == 2 and "'x' is not a number" in bad.output


def test_pendulum_small_angle_between_the_steps():
    """Point-mass pendulum (paper 000 eq. 29) released from rest at eps = 0.01 rad from the vertical:
    x(t) = l sin(theta), theta = eps cos(sqrt(g/l) t) + O(eps^3) (the period grows by eps^2/16)."""
    from multibody.models.pendulums import G, pendulum

    eps, length = 0.01, 1.0
    r = simulate(pendulum(angle=-np.pi / 2 + eps, length=length), t_end=2.0,
                 options=RunOptions(rtol=1e-10, atol=1e-12, output_step=0.05))
    assert np.allclose(r.t, 0.05 * np.arange(41), rtol=0, atol=1e-15)
    x = length * np.sin(eps * np.cos(np.sqrt(G / length) * r.t))
    # |error| <= eps^3 terms: amplitude (eps^3/6 ~ 2e-7) and phase (omega t eps^2/16 * eps ~ 4e-8)
    assert np.max(np.abs(r.column("q", "x") - x)) < 1e-6
