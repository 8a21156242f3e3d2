"""One explicit Runge-Kutta stepper shared by every :class:`~.tableaux.Tableau`.

The stepper knows nothing about mechanics: it integrates ``y' = fun(t, y)`` with ``y`` of
shape (N,). Callers that modify the state between steps (projection onto a constraint
manifold, velocity jumps at events) must tell the stepper through :meth:`RungeKutta.reset`.

References
----------
* E. Hairer, S. P. Norsett, G. Wanner, "Solving Ordinary Differential Equations I", 2nd ed.,
  Springer 1993: Sect. II.4 (step-size control, initial step), II.5 (DOPRI5, DOP853),
  II.6 (dense output). Structure follows scipy/integrate/_ivp/rk.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .controllers import StepController, error_norm
from .tableaux import TABLEAUX, Tableau

#: A step may not be shorter than this many float spacings of |t| (scipy uses the same 10).
MIN_STEP_ULPS = 10
#: An adaptive step that would end within this fraction of itself before t_bound is stretched
#: to land on t_bound, instead of leaving a sliver (Hairer's codes test ``x + 1.01*h > xend``).
LAST_STEP_STRETCH = 0.01
#: With ``fixed_step``, a remainder shorter than this fraction of the step is absorbed into the
#: last step (guards against t0 + n*h missing t_bound by rounding).
FIXED_STEP_SNAP = 1e-9
#: Weight of the 3rd-order estimate in DOP853's error norm (dop853.f: 0.01 on the squares).
ERR3_WEIGHT = 0.1

# Hairer's initial step algorithm (Hairer I, Sect. II.4, "Starting step size"; scipy
# select_initial_step): h0 = H0_FRACTION * |y0|/|f0| unless those norms are below NORM_SMALL
# (then H_FALLBACK); h1 from (H0_FRACTION / max(|f0|, |f'|))**(1/(q+1)), or
# max(H_FALLBACK, h0 * H1_RATIO) if both derivatives are below DERIVATIVE_SMALL;
# result min(H0_GROWTH * h0, h1).
H0_FRACTION = 0.01
NORM_SMALL = 1e-5
H_FALLBACK = 1e-6
DERIVATIVE_SMALL = 1e-15
H1_RATIO = 1e-3
H0_GROWTH = 100.0


class IntegrationError(RuntimeError):
    """The integration cannot continue (non-finite right-hand side, step size too small)."""


class DenseOutput:
    """Continuous extension on one accepted step ``[t_old, t_new]``.

    Calling with a scalar ``t`` returns shape (N,); with an array of shape (k,) returns
    (N, k). Extra stages (DOP853: 3 evaluations) are computed on the first call and counted
    in the integrator's ``nfev``. Accurate to the tableau's ``dense_order`` (Hairer I, II.6).
    """

    def __init__(self, t_old, t_new, y_old, y_new, K, tableau: Tableau, evaluate):
        self.t_old, self.t_new = float(t_old), float(t_new)
        self._h = self.t_new - self.t_old
        self._y_old, self._y_new = y_old, y_new
        self._K = K  # (n_dense, N); rows [:n_base] filled, extra rows computed lazily
        self._tableau = tableau
        self._evaluate = evaluate
        self._Q = None  # (N, q-1): h * K.T @ p_bubble

    def _coefficients(self) -> np.ndarray:
        if self._Q is None:
            tab, K, h = self._tableau, self._K, self._h
            for i, (c, a) in enumerate(zip(tab.c_extra, tab.a_extra)):
                row = tab.n_base + i
                K[row] = self._evaluate(self.t_old + c * h, self._y_old + h * (a[:row] @ K[:row]))
            self._Q = h * (K.T @ tab.p_bubble)
            self._evaluate = self._K = None  # release the integrator and the stages
        return self._Q

    def __call__(self, t):
        t = np.asarray(t, dtype=float)
        Q = self._coefficients()
        theta = (t - self.t_old) / self._h
        if t.ndim == 0:
            cols, y_old, y_new = Q, self._y_old, self._y_new
        else:
            theta = theta.ravel()[None, :]
            cols, y_old, y_new = Q[:, :, None], self._y_old[:, None], self._y_new[:, None]
        bubble = cols[:, -1]  # Horner scheme in theta
        for j in range(Q.shape[1] - 2, -1, -1):
            bubble = bubble * theta + cols[:, j]
        return (1 - theta) * y_old + theta * y_new + theta * (1 - theta) * bubble


@dataclass(frozen=True, eq=False)
class Step:
    """One accepted step. ``h = t - t_old`` (signed); ``error_norm`` is the scaled error
    estimate (NaN for methods without an estimator); ``dense`` interpolates on the step."""

    t_old: float
    t: float
    y: np.ndarray
    h: float
    error_norm: float
    dense: DenseOutput


def select_initial_step(fun, t0, y0, f0, t_bound, *, order, rtol, atol, max_step=np.inf):
    """Hairer's starting step size (Hairer I, Sect. II.4), one evaluation of ``fun``.

    ``y0, f0`` (N,); ``order`` is the order q of the error estimator. Returns ``|h| > 0``.
    """
    interval = abs(t_bound - t0)
    if y0.size == 0 or interval == 0:
        return min(interval, max_step)
    d0 = error_norm(y0, y0, y0, rtol, atol)
    d1 = error_norm(f0, y0, y0, rtol, atol)
    h0 = H_FALLBACK if min(d0, d1) < NORM_SMALL else H0_FRACTION * d0 / d1
    if not (np.isfinite(h0) and h0 > 0):   # norms overflowed (atol near the smallest double): issue 17
        h0 = H_FALLBACK
    h0 = min(h0, interval)
    direction = np.sign(t_bound - t0)
    f1 = fun(t0 + direction * h0, y0 + direction * h0 * f0)
    d2 = error_norm(f1 - f0, y0, y0, rtol, atol) / h0
    if max(d1, d2) <= DERIVATIVE_SMALL:
        h1 = max(H_FALLBACK, h0 * H1_RATIO)
    else:
        h1 = (H0_FRACTION / max(d1, d2)) ** (1.0 / (order + 1))
    return min(H0_GROWTH * h0, h1, interval, max_step)


def _validate_tolerances(rtol, atol, n):
    rtol, atol = float(rtol), np.asarray(atol, dtype=float)
    if atol.ndim > 0 and atol.shape != (n,):
        raise ValueError(f"atol must be a scalar or have shape ({n},), got {atol.shape}")
    if rtol < 0 or np.any(atol < 0):
        raise ValueError("rtol and atol must be non-negative")
    if rtol == 0 and np.any(atol == 0):
        raise ValueError("every component needs rtol > 0 or atol > 0")
    return rtol, (float(atol) if atol.ndim == 0 else atol)


class RungeKutta:
    """Explicit Runge-Kutta integrator for ``y' = fun(t, y)`` driven by a :class:`Tableau`.

    Parameters
    ----------
    fun : callable ``fun(t, y) -> (N,)``
    t0 : float;  y0 : (N,);  t_bound : float (may be < t0: integration backwards)
    tableau : Tableau or name in ``TABLEAUX`` ("rk4", "dopri5", "dop853")
    rtol : float;  atol : float or (N,)   -- used by the error norm (controllers.error_norm)
    controller : StepController
    first_step : float or None (None: Hairer's algorithm, see select_initial_step)
    max_step : float
    fixed_step : float or None -- constant |h| without error control (required for RK4);
        the last step is shortened to land on t_bound; ``max_step`` is then ignored.
    error_filter : callable ``(t_new, y_new, err) -> err`` or None -- applied to the local error
        vector before its norm is taken; a projection method passes the projection onto the
        tangent space of its manifold, because the components it projects away after the step do
        not reach the solution (Hairer, Lubich & Wanner, Geometric Numerical Integration,
        Sect. IV.4; Hairer & Wanner, Solving ODEs II, Sect. VII.2).
    error_measure : callable ``(t_old, y_old, t_new, y_new, err) -> (err', y_old', y_new')`` or None -- the
        filtered local error and both end states in the layout where the error is measured (issue 12: a
        formulation whose state rebuilds the velocity, e.g. partitioning's [q, v_I], measures the error of the
        physical state [q, v]); the norm of controllers.error_norm is taken of those (scalar atol). With the attribute
        ``integral`` = True it also gets ``integral=`` h sum_i e_i Y_i = h^2 (A^T e) K (N,; Y_i the stages, sum e_i = 0):
        the estimate of an auxiliary coordinate s' = y (formulations.flow_error); for a single estimate only (not
        DOP853's quotient of two, Hairer's combination, which a bound of either one's parts does not bound).

    Attributes
    ----------
    t, y : current time and state (do not modify ``y`` in place; use :meth:`reset`)
    h : signed size proposed for the next step
    nfev, n_accepted, n_rejected : counters
    status : "running" or "finished" (t == t_bound)
    """

    def __init__(self, fun, t0, y0, t_bound, *, tableau, rtol=1e-6, atol=1e-9,
                 controller=StepController(), first_step=None, max_step=np.inf,
                 fixed_step=None, error_filter=None, error_measure=None):
        self.error_filter, self.error_measure = error_filter, error_measure
        self.tableau = TABLEAUX[tableau] if isinstance(tableau, str) else tableau
        self.fun, self.controller = fun, controller
        self.t, self.t_bound = float(t0), float(t_bound)
        self.y = np.array(y0, dtype=float)
        if self.y.ndim != 1:
            raise ValueError(f"y0 must have shape (N,), got {self.y.shape}")
        self.direction = 1.0 if self.t_bound >= self.t else -1.0
        self.rtol, self.atol = _validate_tolerances(rtol, atol, self.y.size)
        if not max_step > 0:
            raise ValueError(f"max_step must be positive, got {max_step}")
        self.max_step = float(max_step)
        self.fixed_step = self._validate_fixed_step(fixed_step)
        self.nfev = self.n_accepted = self.n_rejected = 0
        self.status = "finished" if self.t == self.t_bound else "running"
        self._K = np.empty((self.tableau.n_base, self.y.size))
        self._K[0] = self._evaluate(self.t, self.y)
        self._error_prev = None
        self._anchor, self._n_fixed = self.t, 0  # fixed-step grid: t = anchor + k*h
        self.h = self.direction * self._first_step(first_step)

    def _validate_fixed_step(self, fixed_step):
        if fixed_step is None:
            if self.tableau.e is None:
                raise ValueError(f"{self.tableau.name} has no error estimator: pass fixed_step")
            return None
        if not (np.isfinite(fixed_step) and fixed_step > 0):
            raise ValueError(f"fixed_step must be a positive number, got {fixed_step}")
        return float(fixed_step)

    def _first_step(self, first_step):
        if self.fixed_step is not None:
            return self.fixed_step
        if first_step is not None:
            if not first_step > 0:
                raise ValueError(f"first_step must be positive, got {first_step}")
            return min(float(first_step), self.max_step)
        if self.status == "finished":
            return 0.0
        return select_initial_step(self._evaluate, self.t, self.y, self._K[0], self.t_bound,
                                   order=self.tableau.error_order, rtol=self.rtol,
                                   atol=self.atol, max_step=self.max_step)

    def _evaluate(self, t, y):
        f = np.asarray(self.fun(t, y), dtype=float)
        self.nfev += 1
        if f.shape != y.shape:
            raise ValueError(f"fun(t, y) returned shape {f.shape}, expected {y.shape}")
        if not np.all(np.isfinite(f)):
            bad = np.flatnonzero(~np.isfinite(f))[:5].tolist()
            raise IntegrationError(
                f"the right-hand side returned non-finite values at t={float(t)!r} (components "
                f"{bad}). The solution probably blows up or leaves the model's domain there: "
                "check the model and the initial state, or stop the integration earlier.")
        return f

    def _check_step_size(self, h_abs, t):
        min_step = MIN_STEP_ULPS * np.spacing(abs(t))
        if h_abs < min_step:
            raise IntegrationError(
                f"step size {h_abs:.3e} fell below the minimum {min_step:.3e} at t={float(t)!r} "
                f"({self.n_rejected} rejected steps so far). The solution may be singular "
                "near this time or the problem stiff: check the model, loosen rtol/atol, "
                "or use an implicit method.")

    def step(self) -> Step:
        """Advance one accepted step (rejected attempts are retried here and counted)."""
        if self.status == "finished":
            raise IntegrationError(f"already at t_bound={self.t_bound!r}; create a new "
                                   "integrator to continue")
        t, y = self.t, self.y
        if self.fixed_step is not None:
            t_new, y_new, err = self._fixed_attempt(t, y)
        else:
            t_new, y_new, err = self._adaptive_attempts(t, y)
        return self._accept(t, y, t_new, y_new, err)

    def _fixed_attempt(self, t, y):
        t_new = self._anchor + (self._n_fixed + 1) * self.direction * self.fixed_step
        if self.direction * (self.t_bound - t_new) <= FIXED_STEP_SNAP * self.fixed_step:
            t_new = self.t_bound
        self._check_step_size(abs(t_new - t), t)
        y_new = self._stages(t, y, t_new)
        err = np.nan if self.tableau.e is None else self._error_norm(t_new, t_new - t, y, y_new)
        self._n_fixed += 1
        return t_new, y_new, err

    def _adaptive_attempts(self, t, y, h_abs=None, rejected=False):
        """Attempts from |h| = h_abs (default: the proposed step) until one is accepted; ``rejected``: an attempt
        of this step was rejected before (a compiled stepper hands the rest of a step over here)."""
        order = self.tableau.error_order
        h_abs = min(abs(self.h), self.max_step) if h_abs is None else h_abs
        while True:
            self._check_step_size(h_abs, t)
            t_new = t + self.direction * h_abs
            if self.direction * (t_new - self.t_bound) >= -LAST_STEP_STRETCH * h_abs:
                t_new = self.t_bound
            h_abs = abs(t_new - t)
            y_new = self._stages(t, y, t_new)
            err = self._error_norm(t_new, t_new - t, y, y_new)
            if err <= 1:
                break
            self.n_rejected += 1
            rejected = True
            h_abs *= self.controller.factor(err, None, order)
        factor = self.controller.factor(err, self._error_prev, order)
        if rejected:  # Hairer: no increase right after a rejection
            factor = min(1.0, factor)
        self.h = self.direction * min(h_abs * factor, self.max_step)
        self._error_prev = err
        return t_new, y_new, err

    def _stages(self, t, y, t_new):
        """Fill K[1:s] for a step t -> t_new (K[0] = f(t, y) is kept up to date); return y_new."""
        tab, K, h = self.tableau, self._K, t_new - t
        s = tab.n_stages
        last = s - 1 if tab.fsal else s  # the FSAL stage is f(t_new, y_new), done below
        for i in range(1, last):
            K[i] = self._evaluate(t + tab.c[i] * h, y + h * (tab.a[i, :i] @ K[:i]))
        y_new = y + h * (tab.b[:last] @ K[:last])
        if tab.fsal:
            K[s - 1] = self._evaluate(t_new, y_new)
        return y_new

    def _local_error(self, weights, t_new, y_new, h):
        err = h * (weights @ self._K[:self.tableau.n_stages])
        return err if self.error_filter is None else self.error_filter(t_new, y_new, err)

    def _measured_norm(self, weights, t_new, h, y, y_new) -> float:
        err = self._local_error(weights, t_new, y_new, h)
        if self.error_measure is not None:
            s = self.tableau.n_stages
            extra = ({"integral": h * h * ((self.tableau.a[:s, :s].T @ weights) @ self._K[:s])}
                     if getattr(self.error_measure, "integral", False) and self.tableau.e3 is None else {})
            err, y, y_new = self.error_measure(t_new - h, y, t_new, y_new, err, **extra)
        return error_norm(err, y, y_new, self.rtol, self.atol)

    def _error_norm(self, t_new, h, y, y_new) -> float:
        tab = self.tableau
        err5 = self._measured_norm(tab.e, t_new, h, y, y_new)
        if tab.e3 is None:
            return err5
        if err5 == 0:
            return 0.0
        # Hairer's DOP853 estimate |h| S5 / sqrt(N (S5 + 0.01 S3)), S = sum of squares, written
        # with the RMS norms err5, err3 of the two scaled estimates (both include |h|).
        err3 = self._measured_norm(tab.e3, t_new, h, y, y_new)
        return err5 ** 2 / np.hypot(err5, ERR3_WEIGHT * err3)

    def _accept(self, t, y, t_new, y_new, err) -> Step:
        tab, K = self.tableau, self._K
        if not tab.fsal:
            K[tab.n_stages] = self._evaluate(t_new, y_new)
        K_dense = np.empty((tab.n_dense, y.size))
        K_dense[:tab.n_base] = K
        dense = DenseOutput(t, t_new, y, y_new, K_dense, tab, self._evaluate)
        K[0] = K[tab.n_base - 1]  # f(t_new, y_new) is the next first stage
        self.t, self.y = t_new, y_new
        self.n_accepted += 1
        if t_new == self.t_bound:
            self.status = "finished"
        return Step(t_old=t, t=t_new, y=y_new.copy(), h=t_new - t, error_norm=err, dense=dense)

    def reset(self, t, y) -> None:
        """Continue from a state changed by the caller (projection, impact, event).

        Recomputes the first stage ``f(t, y)`` (one evaluation); keeps the step size.
        ``y`` (N,) is copied; it may have another length N' when atol is a scalar (a formulation that changes
        its state's layout, formulations.crossing_window); ``t`` must lie between the current start and t_bound.
        """
        t, y = float(t), np.array(y, dtype=float)
        if y.shape != self.y.shape:
            if y.ndim != 1 or np.ndim(self.atol):
                raise ValueError(f"y must have shape {self.y.shape}, got {y.shape} (another length only with a "
                                 "scalar atol)")
            self._K = np.empty((self.tableau.n_base, y.size))     # the caller changed the state's layout
        if self.direction * (self.t_bound - t) < 0:
            raise ValueError(f"t={t!r} lies beyond t_bound={self.t_bound!r}")
        self._K[0] = self._evaluate(t, y)
        if t != self.t:
            self._anchor, self._n_fixed = t, 0
        self.t, self.y = t, y
        self.status = "finished" if t == self.t_bound else "running"


def solve(fun, t_span, y0, *, method="dopri5", rtol=1e-6, atol=1e-9, fixed_step=None,
          t_eval=None, first_step=None, max_step=np.inf, controller=StepController()):
    """Integrate ``y' = fun(t, y)`` over ``t_span = (t0, t1)``.

    ``method`` is a name in ``TABLEAUX`` or a :class:`Tableau`. Returns ``(t, y, stats)``:
    ``t`` (M,) are the accepted step ends including t0, or ``t_eval`` (sorted in the direction
    of integration, inside t_span) sampled with the dense output; ``y`` has shape (N, M)
    (same layout as scipy's solve_ivp); ``stats`` is a dict with nfev, n_accepted, n_rejected.
    """
    t0, t1 = float(t_span[0]), float(t_span[1])
    solver = RungeKutta(fun, t0, y0, t1, tableau=method, rtol=rtol, atol=atol,
                        controller=controller, first_step=first_step, max_step=max_step,
                        fixed_step=fixed_step)
    d = solver.direction
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float)
        if np.any(np.diff(d * t_eval) < 0) or np.any(d * (t_eval - t0) < 0) \
                or np.any(d * (t_eval - t1) > 0):
            raise ValueError("t_eval must be sorted in the direction of integration and lie "
                             "inside t_span")
    ts, ys, done = ([t0], [solver.y.copy()], 0) if t_eval is None else ([], [], 0)
    while solver.status == "running":
        step = solver.step()
        if t_eval is None:
            ts.append(step.t)
            ys.append(step.y)
            continue
        stop = np.searchsorted(d * t_eval, d * step.t, side="right")
        if stop > done:
            ys.extend(step.dense(t_eval[done:stop]).T)
            done = stop
    if t_eval is not None:
        ts = t_eval
        ys.extend([solver.y.copy()] * (len(t_eval) - done))  # only if t0 == t1
    stats = {"nfev": solver.nfev, "n_accepted": solver.n_accepted,
             "n_rejected": solver.n_rejected}
    y = np.array(ys).T if len(ys) else np.empty((solver.y.size, 0))
    return np.asarray(ts, dtype=float), y, stats
