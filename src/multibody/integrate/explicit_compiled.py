"""An explicit Runge-Kutta stepper whose step attempts run in one compiled call (issue 16 item 1), for a Lagrange
formulation with the compiled right-hand side and error filter of :mod:`multibody.fast`
(:func:`multibody.fast.rk.applies`; spatial director models: :func:`multibody.fast.spatial_rk.spatial_applies`).
Everything but the attempts (the accepted step, dense output, reset, counters) is :class:`~.explicit.RungeKutta`'s; an attempt the compiled call hands back (a right-hand side that
is not finite or whose fast solve declines, a step below the minimum) is made by RungeKutta's own loop, and an
attempt whose compiled error filter declined is judged with the reference filter, so the numbers are the
reference's (tests/test_fast_rk.py).
"""
from __future__ import annotations

import numpy as np

from .controllers import ERROR_NORM_FLOOR, PI_ALPHA_SHIFT, StepController
from .explicit import LAST_STEP_STRETCH, MIN_STEP_ULPS, RungeKutta
from .tableaux import TABLEAUX


class CompiledRungeKutta(RungeKutta):
    """RungeKutta on ``form.rhs`` with ``form.error_filter`` and ``form.error_measure``, its attempts by :class:`multibody.fast.rk.CompiledAttempts`
    (spatial models: :class:`multibody.fast.spatial_rk.SpatialAttempts`)."""

    def __init__(self, form, t0, y0, t_bound, *, tableau, rtol, atol, max_step=np.inf,
                 controller=StepController(), attempts=None):
        from ..fast.rk import CompiledAttempts
        from ..fast.spatial_rk import SpatialAttempts, spatial_applies
        super().__init__(form.rhs, t0, y0, t_bound, tableau=tableau, rtol=rtol, atol=atol, controller=controller,
                         max_step=max_step, error_filter=form.error_filter,
                         error_measure=getattr(form, "error_measure", None))
        self.form = form
        attempts = attempts or (SpatialAttempts if spatial_applies(form) else CompiledAttempts)
        self.compiled = attempts(form, self.tableau, self.rtol, self.atol, controller, PI_ALPHA_SHIFT,
                                 ERROR_NORM_FLOOR, LAST_STEP_STRETCH)

    def _adaptive_attempts(self, t, y, h_abs=None, rejected=False):
        h_abs = min(abs(self.h), self.max_step) if h_abs is None else h_abs
        bounds = (self.t_bound, self.direction, MIN_STEP_ULPS * np.spacing(abs(t)), self.max_step)
        status, t_new, y_new, h_abs, h_next, err, n_rejected, nfev, rejected = self.compiled(
            t, y, h_abs, bounds, self._K, self._error_prev)
        self.n_rejected += n_rejected
        self.nfev += nfev
        self.form.nfev += nfev
        if status == self.compiled.FILTER_DECLINED:     # the stages stand; the reference filter judges them
            err = self._error_norm(t_new, t_new - t, y, y_new)
            if not err <= 1:
                self.n_rejected += 1
                h_abs *= self.controller.factor(err, None, self.tableau.error_order)
                return super()._adaptive_attempts(t, y, h_abs, True)
            h_next = min(h_abs * self._factor(err, rejected), self.max_step)
        elif status != self.compiled.OK:        # the reference makes this attempt (and raises if it must)
            return super()._adaptive_attempts(t, y, h_abs, rejected)
        self.h = self.direction * h_next
        self._error_prev = err
        return t_new, y_new, err

    def _factor(self, err, rejected):
        """The step-size factor after an accepted attempt (RungeKutta._adaptive_attempts: no increase right after a
        rejection)."""
        factor = self.controller.factor(err, self._error_prev, self.tableau.error_order)
        return min(1.0, factor) if rejected else factor


def compiled_runge_kutta(form, t0, y0, t_bound, tableau, o) -> CompiledRungeKutta | None:
    """A CompiledRungeKutta for an adaptive run (no fixed step) of a formulation the compiled attempts reproduce,
    with a tableau without DOP853's second estimate and a scalar atol; else None (the caller's RungeKutta)."""
    from ..fast.rk import applies
    from ..fast.spatial_rk import spatial_applies
    tab = TABLEAUX[tableau] if isinstance(tableau, str) else tableau
    own = getattr(form, "compiled_attempts", lambda: None)()     # e.g. fast.nullspace.NullSpaceAttempts
    if o.step is not None or tab.e is None or tab.e3 is not None or np.ndim(o.atol):
        return None
    if not (own or applies(form) or spatial_applies(form)):
        return None
    if own is None and form.error_filter is not None and getattr(form.error_filter, "__func__", None) is not \
            getattr(type(form), "_tangent_error", None):
        return None
    return CompiledRungeKutta(form, t0, y0, t_bound, tableau=tab, rtol=o.rtol, atol=o.atol, max_step=o.max_step,
                              attempts=own)
