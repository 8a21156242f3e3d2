"""How a row of benchmarks/singular_matrix.py is judged (issue 12: "tip error consistent with the tolerance").

The yardstick. A multibody run's crank-tip error is compared with what the same integrator makes on the smooth
exact reduction theta'' = -k cos theta (state (theta, theta'), the project's own Runge-Kutta, reduced_tip_error).
One reduced run at the requested tolerance is not a sound yardstick: the global error of an adaptive Runge-Kutta run
is a sum of local errors the control keeps below the tolerance, not equal to it, and their signs and the discrete step
sequence make the sum jump by 10x-100x between neighbouring tolerances (N = 10, dopri5, rtol 1e-4: 0.47 m at atol
1e-4, 0.02 m at 1e-6; dop853 at rtol 1e-7: 94000 tol against 700-1000 tol at the neighbours). What the tolerance
*promises* is the asymptotic law: with local extrapolation (DOPRI5, DOP853 propagate the higher-order solution), the
step is chosen so that the lower-order estimate ~ h^(p) equals Tol, the local error of the propagated solution is
~ h^(p+1) = Tol h, and the global error is ~ C Tol, proportional to the tolerance (Hairer, Norsett, Wanner I,
Sect. II.4 and the "tolerance proportionality" of Sect. II.10; Stetter), with an error constant C that fluctuates
from one tolerance to the next. So the yardstick is the *envelope* of the reduced runs over a neighbourhood of the
requested tolerances (rtol, atol both scaled by s = 10^(j/8), |j| <= REACH, the ratio atol / rtol kept): the
largest crank-tip error the integrator makes on the smooth 1-DOF problem at a tolerance within a factor 10^(3/8) =
2.37 of the requested one. A lucky cancellation at exactly the requested tolerance no longer sets the bar.

Why 2.37. The multibody run controls the RMS of its error over all its coordinates with scales atol + rtol |y_i|,
the reduced run over (theta, theta'). For an error along the motion (e_q = J e_theta, e_v = J e_omega with J =
dq / d theta) the multibody norm is the reduced one times w = sqrt(mean_i (J_i sc_theta / sc_i)^2): the crank's
effective tolerance is the requested one over w. Measured along lagrange runs (dopri5, rtol 1e-6 and 1e-10, both
atols) on the double four-bar and N = 10: positions w = 0.52-880 (median 3-21: bounded coordinates are held
tighter than the growing angle), velocities w = 0.64-0.93. So the crank's tolerance is at most 1/0.52 = 1.92 times
looser than the requested one, and the neighbourhood reaches beyond that (10^(3/8) = 2.37 > 1.92).

Errors are compared as phase angles, 2 arcsin(chord / 2) (the tip moves on the unit circle): the phase error grows
linearly in time and is what is proportional to the tolerance; the chord saturates at 2 m once the phase is lost,
and then a tip error of 2 m is consistent with a yardstick whose phase is lost too (phase(2) = pi).

On the branch (the crank spread, spread_limit). The exact motion keeps the cranks of a group parallel (spread 0). The
other branch, which meets this one at the singular configuration q* (cranks horizontal; paper 000 Sect. 3), is each
cell's anti-parallelogram: sin(delta / 2) = (L / r) sin theta_bar (delta the spread of the cell's two cranks,
theta_bar their mean angle, L = r = 1 m the coupler and crank of every model here), delta = 2 |theta_bar - theta*|,
growing from the crossing on. Near q* the constraints cannot tell the two apart. With the crank tips P1, P2 of a cell,
g = |P2 - P1|^2 - L^2 = 4 r sin(delta / 2) (r sin(delta / 2) - L sin theta_bar); a configuration whose hinge rows
hold to e (|Phi| <= e, max norm) has |P2 - P1| - L <= 2 e along the coupler, which stays horizontal on the branch, so
|g| <= 4 L e (to first order in e). The root of this quadratic in sin(delta / 2) on the parallel branch has
|sin(delta / 2)| = (sqrt(L^2 sin^2 theta_bar + g) - L |sin theta_bar|) / (2 r) <= sqrt(|g|) / (2 r), largest at
theta_bar = theta* (the bifurcation). So |delta| <= 2 sqrt(L e) / r per cell and (cranks - 1) times that across a
group: the largest spread a configuration on the branch can have while its constraints hold to e. A larger spread is
off the branch. A smaller one is the freedom the position tolerance leaves next to q*. e is the tolerance the run holds
its positions to, relative to the model's length scale: the Runge-Kutta runs project onto Phi = 0 to
KinematicTolerance.position = 1e-12 (every formulation's projection_tol), and generalized-alpha's Newton test holds
|Phi| <= NewtonControl.increment = 1e-10. Limits: double four-bar 5.7e-6 rad (Runge-Kutta) and 5.7e-5 rad
(generalized-alpha); N = 40 5.1e-4 and 5.1e-3 rad. A run that left its branch passes the limit once
|theta_bar - theta*| > limit / 2, i.e. within limit / (2 |theta'|) <= 0.6 ms of the crossing (|theta'| = 4.8 rad/s
there), and its spread reaches pi before the next crossing. Measured: the Runge-Kutta rows keep the spread at most
3.3e-10 rad. Generalized-alpha at h = 1e-4 reaches 1.2e-6 rad on N = 40: inside a crossing window the positions along
the pinned directions are the scheme's prediction (integrate.generalized_alpha_crossing) and drift, by 1.2e-7 rad over
the 2.8 ms window at t = 0.72 and by 8.0e-7 rad over the 7.1 ms window at t = 1.244; the release puts them back on
every row (spread 1e-13 after it). N = 10: 4.6e-10 rad. (The fixed limit of 1e-6 rad used before lay below what the
constraints resolve next to q*, and failed that run.)

The criterion (verdict): a row passes iff it finished ("ok"), its cranks are on the branch (crank spread <=
spread_limit), it reports every crossing it passes (crossings == crossings_own, the multiples of pi the run's own
crank angle passes; crossings_expected, the exact solution's, in rows without that column: a run whose phase is ahead
may pass one more crossing than the exact solution, and its phase is judged by the tip criterion), and where a
yardstick exists (a model with a closed-form reduction and an rtol / atol row) phase(tip_error) <= phase(envelope),
i.e. tip_ratio <= 1. A minimal row that stops naming a singular configuration passes: minimal coordinates cannot
continue through one (issue 12: "minimal where it applies"). n/a rows are not cells of the matrix. Every other stop,
TIMEOUT or ERROR fails.
"""
from __future__ import annotations

import csv
import functools
import math

import numpy as np

from multibody.integrate.explicit import solve
from multibody.integrate.generalized_alpha import NewtonControl
from multibody.kinematics import KinematicTolerance
from multibody.models.four_bars import crank_rate_constant, double_four_bar, n_four_bar
from multibody.models.modified_four_bars import (crank_angle_exact_cells, double_four_bar_modified,
                                                 four_bar_2x2_modified, triple_four_bar_modified)

#: the models of the matrix: name -> (factory, cells (None: no closed form), t_end)
MODELS = {"double-four-bar": (double_four_bar, 2, 10.0),
          "double-four-bar-modified": (double_four_bar_modified, 2, 10.0),
          "triple-four-bar-modified": (triple_four_bar_modified, 3, 10.0),
          "four-bar-2x2-modified": (four_bar_2x2_modified, None, 2.0),
          "n-four-bar-10": (lambda: n_four_bar(cells=10), 10, 20.0),
          "n-four-bar-40": (lambda: n_four_bar(cells=40), 40, 20.0)}
#: crank and coupler length (m) of every model in MODELS (models.four_bars.L, models.modified_four_bars.L)
LINK = 1.0

#: the neighbourhood of tolerances: s = 10 ** (j / STEPS_PER_DECADE) for |j| <= REACH (10^(3/8) = 2.37 covers the
#: largest loosening of the crank's tolerance by the multibody norm, 1.92, module docstring)
STEPS_PER_DECADE = 8
REACH = 3


def crank_groups(labels) -> list[list[str]]:
    """Groups of crank angle labels that stay parallel on the branch."""
    if "bar8.theta" in labels and "bar9.theta" not in labels:       # the 2x2 four-bar: lower and upper cranks
        return [["bar1.theta", "bar2.theta", "bar3.theta"], ["bar5.theta", "bar6.theta", "bar7.theta"]]
    return [[c for c in labels if c.endswith(".theta") and c[3:-6].isdigit() and int(c[3:-6]) % 2 == 1]]


def position_tolerance(integrator: str) -> float:
    """The tolerance, relative to the model's length scale, to which a run of ``integrator`` holds |Phi|: the Newton
    test of generalized-alpha (NewtonControl.increment), the projection of every Runge-Kutta run
    (KinematicTolerance.position, the formulations' projection_tol)."""
    return NewtonControl().increment if integrator == "generalized-alpha" else KinematicTolerance().position


@functools.cache
def spread_limit(model: str, integrator: str) -> float:
    """The largest crank spread (rad) of a configuration on the parallel branch whose constraints hold to the run's
    position tolerance e = position_tolerance x length scale: (cranks - 1) 2 sqrt(L e) / r over the largest group,
    reached at the singular configuration (module docstring, "On the branch")."""
    built = MODELS[model][0]()
    pairs = max(len(g) for g in crank_groups(built.coordinate_names)) - 1
    e = position_tolerance(integrator) * built.length_scale
    return pairs * 2.0 * math.sqrt(LINK * e) / LINK


def off_branch(row) -> bool:
    """Whether a finished row's crank spread exceeds spread_limit of its model and integrator."""
    return float(row["crank_spread_rad"]) > spread_limit(row["model"], row["integrator"])


@functools.cache
def reduced_tip_error(cells, t_end, integrator, rtol, atol) -> float:
    """The crank-tip error of the same integrator at the same rtol / atol on the exact 1-DOF reduction
    theta'' = -k cos theta itself (state (theta, theta'), the project's own explicit Runge-Kutta with its default step
    control, integrate.explicit.solve; Hairer, Norsett, Wanner I, Sect. II.4-II.5), at its accepted steps, against
    crank_angle_exact_cells: what the integrator achieves on the smooth reduced problem."""
    k = crank_rate_constant(cells)
    t, y, _ = solve(lambda _, x: np.array([x[1], -k * np.cos(x[0])]), (0.0, t_end), np.array([np.pi / 2, -1.0]),
                    method=integrator, rtol=rtol, atol=atol)
    exact = crank_angle_exact_cells(t, cells=cells)
    return float(np.hypot(np.cos(y[0]) - np.cos(exact), np.sin(y[0]) - np.sin(exact)).max())


def scaled(tol: float, j: int) -> float:
    """tol * 10^(j / STEPS_PER_DECADE), snapped to the grid 10^(i / STEPS_PER_DECADE) when tol lies on it (so that
    neighbouring tolerances share their reduced runs in reduced_tip_error's cache)."""
    e = STEPS_PER_DECADE * math.log10(tol)
    if abs(e - round(e)) < 1e-9:
        return 10.0 ** ((round(e) + j) / STEPS_PER_DECADE)
    return tol * 10.0 ** (j / STEPS_PER_DECADE)


def envelope(cells, t_end, integrator, rtol, atol, reduced=None) -> float:
    """The yardstick: the largest reduced_tip_error (or ``reduced``) over rtol, atol both scaled by
    10^(j / STEPS_PER_DECADE), |j| <= REACH (HNW I, Sect. II.4 / II.10: the global error ~ C Tol with a fluctuating C;
    module docstring)."""
    reduced = reduced or reduced_tip_error
    return max(reduced(cells, t_end, integrator, scaled(rtol, j), scaled(atol, j)) for j in range(-REACH, REACH + 1))


def phase(chord: float) -> float:
    """The phase angle (rad) between two points of the unit circle a chord apart: 2 arcsin(chord / 2), pi from a
    chord of 2 on (the tip error saturates once the phase is lost)."""
    return 2.0 * math.asin(min(float(chord), 2.0) / 2.0)


def tip_ratio(tip: float, yardstick: float) -> float:
    """phase(tip) / phase(yardstick): <= 1 is consistent with the tolerance (inf for a yardstick of 0 and a tip that
    is not)."""
    a, b = phase(tip), phase(yardstick)
    return a / b if b > 0 else (0.0 if a == 0 else math.inf)


def verdict(row) -> list[str] | None:
    """Why a row of the matrix fails the criterion (module docstring): [] when it passes, None for an n/a row (not a
    cell of the matrix)."""
    status, message = row.get("status", ""), " ".join(row.get("message", "").split())
    if status == "n/a":
        return None
    if status == "STOPPED" and row.get("formulation") == "minimal" and "singular configuration at t" in message:
        return []
    if status != "ok":
        return [f"{status}: {message[:160]}" if message else status]
    why = []
    if off_branch(row):
        why.append(f"off branch (crank spread {row['crank_spread_rad']} rad > "
                   f"{spread_limit(row['model'], row['integrator']):.1e})")
    found, own = row.get("crossings", ""), row.get("crossings_own") or row.get("crossings_expected", "")
    if found.split(" ")[0] != str(own) or "not monitored" in found:
        why.append(f"crossings {found}/{own}" + (" (its own trajectory's)" if row.get("crossings_own") else ""))
    if row.get("tip_ratio") and float(row["tip_ratio"]) > 1.0:
        why.append(f"tip {row['tip_error_m']} m, x{row['tip_ratio']} the envelope {row['reduced_envelope_m']} m")
    return why


def failing(path: str, kernel: str = "") -> list[tuple[dict, list[str]]]:
    """The rows of a CSV written by singular_matrix.py (of BLAS kernel ``kernel``, all when empty) that fail the
    criterion, with the reasons."""
    out = []
    for row in csv.DictReader(open(path, newline="")):
        if kernel and row.get("blas_kernel") != kernel:
            continue
        why = verdict(row)
        if why:
            out.append((row, why))
    return out


def check(path: str, kernel: str = "") -> int:
    """Print every failing cell (model, formulation, integrator, rtol / atol or step, kernel: reasons) and a count;
    1 if any fails, else 0 (the exit status of ``singular_matrix.py --check``)."""
    bad = failing(path, kernel)
    for row, why in bad:
        tol = f"h {row['step']}" if row.get("step") else f"{row['rtol']} / {row['atol']}"
        print(f"FAIL {row['model']} {row['formulation']} {row['integrator']} {tol} [{row.get('blas_kernel', '')}]: "
              + "; ".join(why))
    n = sum(verdict(r) is not None for r in csv.DictReader(open(path, newline=""))
            if not kernel or r.get("blas_kernel") == kernel)
    print(f"{len(bad)} of {n} cells fail the criterion (tip phase <= the reduced runs' envelope over rtol, atol x "
          f"10^(+-{REACH}/{STEPS_PER_DECADE}), on the branch, every crossing)")
    return 1 if bad else 0


def error_constants(cells: int, t_end: float, integrator: str, hundredth: bool) -> list[tuple[float, float]]:
    """(Tol, E / Tol) of the reduced run every 1/STEPS_PER_DECADE decade from 1e-4 to 1e-12 (atol = rtol, or rtol / 100
    with ``hundredth``): the error constant C of E ~ C Tol (HNW I, Sect. II.10) and how much it fluctuates."""
    out = []
    for i in range(4 * STEPS_PER_DECADE, 12 * STEPS_PER_DECADE + 1):
        tol = 10.0 ** (-i / STEPS_PER_DECADE)
        out.append((tol, reduced_tip_error(cells, t_end, integrator, tol, tol / 100 if hundredth else tol) / tol))
    return out


def norm_weights(model, t_end: float, rtol: float, atol: float, crank: str = "bar1.theta") -> tuple:
    """(w_q, w_v) along a lagrange dopri5 run: the factor by which the multibody RMS error norm weighs an error along
    the motion (e_q = J e_theta, e_v = J e_omega, J = dq / d theta = v / omega) against the reduced run's norm on
    (theta, theta'): w = sqrt(mean_i (J_i sc_theta / sc_i)^2), sc = atol + rtol |y| (controllers.error_norm). The
    crank's effective tolerance is the requested one over w."""
    from multibody import RunOptions, simulate
    r = simulate(model, t_end=t_end, formulation="lagrange",
                 options=RunOptions(integrator="dopri5", rtol=rtol, atol=atol))
    labels = r.series["q"].labels
    q = np.stack([r.column("q", c) for c in labels], axis=1)
    v = np.stack([r.column("v", c) for c in labels], axis=1)
    th, om = q[:, labels.index(crank)], v[:, labels.index(crank)]
    jac = v / om[:, None]
    w_q = np.sqrt(np.mean((jac * (atol + rtol * np.abs(th))[:, None] / (atol + rtol * np.abs(q))) ** 2, axis=1))
    w_v = np.sqrt(np.mean((jac * (atol + rtol * np.abs(om))[:, None] / (atol + rtol * np.abs(v))) ** 2, axis=1))
    return w_q, w_v


def main() -> None:
    """Print the reduced runs' error constants and the norm weights the yardstick's neighbourhood is argued from
    (module docstring; docs/guide/singular.md, "How a cell is judged")."""
    from multibody.models.four_bars import double_four_bar, n_four_bar
    for cells, t_end in ((2, 10.0), (10, 20.0)):
        for integrator in ("dopri5", "dop853"):
            for hundredth in (False, True):
                c = error_constants(cells, t_end, integrator, hundredth)
                print(f"cells {cells} {integrator} atol = rtol{' / 100' if hundredth else ''}: E / Tol "
                      + " ".join(f"{t:.1e}:{k:.0f}" for t, k in c))
    for name, model in (("double-four-bar", double_four_bar), ("n-four-bar-10", lambda: n_four_bar(cells=10))):
        for rtol, atol in ((1e-6, 1e-6), (1e-6, 1e-8), (1e-10, 1e-10), (1e-10, 1e-12)):
            w_q, w_v = norm_weights(model(), 10.0, rtol, atol)
            print(f"{name} rtol {rtol:.0e} atol {atol:.0e}: w_q {w_q.min():.2f}-{w_q.max():.3g} (median "
                  f"{np.median(w_q):.3g}), w_v {w_v.min():.2f}-{w_v.max():.2f}")


if __name__ == "__main__":
    main()
