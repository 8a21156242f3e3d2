"""Butcher tableaux of explicit Runge-Kutta methods, stored as data.

A method is a :class:`Tableau`; one shared stepper (:mod:`multibody.integrate.explicit`)
runs all of them, in the style of ``scipy/integrate/_ivp/rk.py`` and diffrax.

Stage layout used by the stepper and by the dense output (``N`` = state size)::

    K[0:s]              the s stages of the step (K[0] = f(t_old, y_old))
    K[s]                f(t_new, y_new), only if not ``fsal`` (for FSAL methods it is K[s-1])
    K[n_base:n_dense]   extra stages needed only by the dense output (DOP853: 3)

so ``n_base = s + (0 if fsal else 1)`` and ``n_dense = n_base + len(c_extra)``. Every
method's continuous extension is written in the same monomial form (``p`` has shape
``(n_dense, q)``)::

    y(t_old + theta*h) = y_old + h * sum_{j=1..q} (K[:n_dense].T @ p[:, j-1]) * theta**j
      = (1-theta) y_old + theta y_new
        + theta (1-theta) h * sum_{j=0..q-2} (K[:n_dense].T @ p_bubble[:, j]) * theta**j

The second form (``p_bubble`` derived from ``p``) is evaluated: it reproduces both step ends
exactly and is better conditioned (DOP853: |p_bubble| <= 378 against |p| <= 546).

References
----------
* J. R. Dormand, P. J. Prince, "A family of embedded Runge-Kutta formulae",
  J. Comput. Appl. Math. 6 (1980) 19-26.
* E. Hairer, S. P. Norsett, G. Wanner, "Solving Ordinary Differential Equations I",
  2nd ed., Springer 1993: Sect. II.1 (RK4), II.5 (DOPRI5, DOP853), II.6 (dense output).
* L. F. Shampine, "Some practical Runge-Kutta formulas", Math. Comp. 46 (1986) 135-150
  (the DOPRI5 quartic interpolant, as in MATLAB ode45 and scipy RK45).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Absolute tolerance of the consistency checks in :class:`Tableau` (row sums, weight sums,
#: interpolation at theta=1): coefficients stored as doubles differ from exact by a few ulps.
COEFFICIENT_TOLERANCE = 1e-12


def _frozen(x) -> np.ndarray:
    arr = np.array(x, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Tableau:
    """Coefficients of an explicit (embedded) Runge-Kutta method with a continuous extension.

    Attributes
    ----------
    name : str
    order : int
        Order ``p`` of the propagated solution (local error O(h**(p+1))).
    error_order : int or None
        Order ``q`` of the embedded estimate (estimate is O(h**(q+1))); None for fixed-step
        methods without an estimator (RK4).
    c : (s,) nodes.   a : (s, s) strictly lower triangular.   b : (s,) weights.
    e : (s,) or None
        Error weights ``b - b_hat``; the local error estimate is ``h * e @ K[:s]`` (only its
        norm is used, so the sign convention is immaterial).
    fsal : bool
        First Same As Last: ``c[-1] == 1`` and ``a[-1] == b``, so ``K[s-1] = f(t_new, y_new)``.
    dense_order : int
        Order ``p*`` of the continuous extension (local error O(h**(p*+1))).
    p : (n_dense, q)
        Dense-output matrix in the monomial form of the module docstring.
    p_bubble : (n_dense, q-1), derived (not an argument): see the module docstring.
    c_extra : (m,) nodes of the extra dense-output stages (empty for RK4 and DOPRI5).
    a_extra : (m, n_dense); row ``i`` may use only stages ``< n_base + i``.
    e3 : (s,) or None
        Second error-weight vector ``b - b_hat3`` of DOP853. When given, the error norm is
        Hairer's combination ``err5**2 / sqrt(err5**2 + (0.1*err3)**2)`` of the two scaled
        estimates (Hairer's dop853.f; scipy DOP853._estimate_error_norm).
    """

    name: str
    order: int
    error_order: int | None
    c: np.ndarray
    a: np.ndarray
    b: np.ndarray
    e: np.ndarray | None
    fsal: bool
    dense_order: int
    p: np.ndarray
    c_extra: np.ndarray | None = None
    a_extra: np.ndarray | None = None
    e3: np.ndarray | None = None
    p_bubble: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        if self.c_extra is None:  # no extra stages: n_dense = n_base
            object.__setattr__(self, "c_extra", np.zeros(0))
            object.__setattr__(self, "a_extra", np.zeros((0, len(self.c) + (not self.fsal))))
        for name in ("c", "a", "b", "e", "p", "c_extra", "a_extra", "e3"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _frozen(getattr(self, name)))
        self._check_shapes()
        self._check_consistency()
        object.__setattr__(self, "p_bubble", _frozen(self._bubble()))

    @property
    def n_stages(self) -> int:
        """Stages evaluated per step attempt (including the FSAL stage)."""
        return len(self.c)

    @property
    def n_base(self) -> int:
        """Stages plus ``f(t_new, y_new)`` (rows of K the stepper keeps)."""
        return self.n_stages + (0 if self.fsal else 1)

    @property
    def n_dense(self) -> int:
        """All rows of K used by the dense output (base + extra stages)."""
        return self.n_base + len(self.c_extra)

    def _bubble(self) -> np.ndarray:
        """u(theta) = sum_k p_k theta**k - b theta vanishes at 0 and 1 (checked), so
        u = theta * v(theta), v = (1-theta) r(theta) with r_j = v_0 + ... + v_j."""
        v = self.p.copy()
        v[:self.n_stages, 0] -= self.b
        return np.cumsum(v, axis=1)[:, :-1]

    def _check_shapes(self):
        s, nd = self.n_stages, self.n_dense
        expected = {"a": (s, s), "b": (s,), "e": (s,), "e3": (s,),
                    "a_extra": (len(self.c_extra), nd)}
        for name, shape in expected.items():
            value = getattr(self, name)
            if value is not None and value.shape != shape:
                raise ValueError(f"{self.name}: {name} has shape {value.shape}, expected {shape}")
        if self.p.ndim != 2 or self.p.shape[0] != nd:
            raise ValueError(f"{self.name}: p must have shape ({nd}, q), got {self.p.shape}")
        if (self.e is None) != (self.error_order is None):
            raise ValueError(f"{self.name}: give both e and error_order, or neither")

    def _check_consistency(self):
        tol, s, nb = COEFFICIENT_TOLERANCE, self.n_stages, self.n_base
        b_dense = np.zeros(self.n_dense)
        b_dense[:s] = self.b
        checks = {
            "a is strictly lower triangular": np.all(np.triu(self.a) == 0),
            "c equals the row sums of a": np.allclose(self.a.sum(1), self.c, rtol=0, atol=tol),
            "b sums to 1": abs(self.b.sum() - 1) <= tol,
            "e sums to 0": self.e is None or abs(self.e.sum()) <= tol,
            "the interpolant reaches y_new at theta=1":
                np.allclose(self.p.sum(1), b_dense, rtol=0, atol=tol),
            "c_extra equals the row sums of a_extra":
                np.allclose(self.a_extra.sum(1), self.c_extra, rtol=0, atol=tol),
            "extra stage i uses only earlier stages": all(
                np.all(row[nb + i:] == 0) for i, row in enumerate(self.a_extra)),
        }
        if self.fsal:
            checks["FSAL: c[-1] == 1 and a[-1] == b"] = (
                self.c[-1] == 1 and np.allclose(self.a[-1], self.b, rtol=0, atol=tol))
        failed = [name for name, ok in checks.items() if not ok]
        if failed:
            raise ValueError(f"inconsistent tableau {self.name}: " + "; ".join(failed))


def hermite_dense_matrix(b) -> np.ndarray:
    """Cubic Hermite interpolant (dense order 3) of a non-FSAL method, shape (s+1, 3): from
    y_old, y_new = y_old + h*b@K, f_old = K[0], f_new = K[s] (Hairer et al. I, Sect. II.6)."""
    s = len(b)
    bb, f_old, f_new = np.zeros(s + 1), np.zeros(s + 1), np.zeros(s + 1)
    bb[:s], f_old[0], f_new[s] = b, 1.0, 1.0
    return np.column_stack([f_old, 3 * bb - 2 * f_old - f_new, f_old + f_new - 2 * bb])


_RK4_B = np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6])

#: Classical 4th-order Runge-Kutta method (Kutta 1901), fixed step only.
RK4 = Tableau(
    name="rk4", order=4, error_order=None,
    c=[0, 1 / 2, 1 / 2, 1],
    a=[[0, 0, 0, 0], [1 / 2, 0, 0, 0], [0, 1 / 2, 0, 0], [0, 0, 1, 0]],
    b=_RK4_B, e=None, fsal=False,
    dense_order=3, p=hermite_dense_matrix(_RK4_B),
)

_DOPRI5_B = [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]

#: Dormand-Prince 5(4) (Dormand & Prince 1980), 7 stages with FSAL, so 6 evaluations per
#: step. Quartic dense output of Shampine (1986), coefficients as in scipy RK45 (BSD).
DOPRI5 = Tableau(
    name="dopri5", order=5, error_order=4,
    c=[0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1],
    a=[[0, 0, 0, 0, 0, 0, 0],
       [1 / 5, 0, 0, 0, 0, 0, 0],
       [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
       [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
       [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
       [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
       _DOPRI5_B],
    b=_DOPRI5_B,
    # b - b_hat with b_hat = [5179/57600, 0, 7571/16695, 393/640, -92097/339200, 187/2100, 1/40]
    e=[71 / 57600, 0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40],
    fsal=True,
    dense_order=4,
    p=[[1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
       [0, 0, 0, 0],
       [0, 131558114200 / 32700410799, -68118460800 / 10900136933,
        87487479700 / 32700410799],
       [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
       [0, 127303824393 / 49829197408, -318862633887 / 49829197408,
        701980252875 / 199316789632],
       [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
       [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423]],
)

# DOP853 (Hairer, Norsett & Wanner I, Sect. II.5 and II.6; Hairer's Fortran code DOP853).
# Coefficients copied from scipy/integrate/_ivp/dop853_coefficients.py (scipy 1.17, BSD-3-Clause
# licence, Copyright (c) 2001-2002 Enthought, Inc. and 2003- SciPy Developers), which took them
# from Hairer's dop853.f. Extended stages: 0..11 the method, 12 = f(t_new, y_new) (its row of A
# is b), 13..15 the extra stages of the 7th-order dense output.
_DOP853_C = np.array([
    0.0, 0.526001519587677318785587544488e-01, 0.789002279381515978178381316732e-01,
    0.118350341907227396726757197510, 0.281649658092772603273242802490,
    0.333333333333333333333333333333, 0.25, 0.307692307692307692307692307692,
    0.651282051282051282051282051282, 0.6, 0.857142857142857142857142857142, 1.0, 1.0, 0.1, 0.2,
    0.777777777777777777777777777778,
])
# Nonzero entries of the extended coefficient matrix, row -> {column: value}.
_DOP853_A_ROWS = {
    1: {0: 5.26001519587677318785587544488e-2},
    2: {0: 1.97250569845378994544595329183e-2, 1: 5.91751709536136983633785987549e-2},
    3: {0: 2.95875854768068491816892993775e-2, 2: 8.87627564304205475450678981324e-2},
    4: {
        0: 2.41365134159266685502369798665e-1, 2: -8.84549479328286085344864962717e-1,
        3: 9.24834003261792003115737966543e-1,
    },
    5: {
        0: 3.7037037037037037037037037037e-2, 3: 1.70828608729473871279604482173e-1,
        4: 1.25467687566822425016691814123e-1,
    },
    6: {
        0: 3.7109375e-2, 3: 1.70252211019544039314978060272e-1,
        4: 6.02165389804559606850219397283e-2, 5: -1.7578125e-2,
    },
    7: {
        0: 3.70920001185047927108779319836e-2, 3: 1.70383925712239993810214054705e-1,
        4: 1.07262030446373284651809199168e-1, 5: -1.53194377486244017527936158236e-2,
        6: 8.27378916381402288758473766002e-3,
    },
    8: {
        0: 6.24110958716075717114429577812e-1, 3: -3.36089262944694129406857109825,
        4: -8.68219346841726006818189891453e-1, 5: 2.75920996994467083049415600797e1,
        6: 2.01540675504778934086186788979e1, 7: -4.34898841810699588477366255144e1,
    },
    9: {
        0: 4.77662536438264365890433908527e-1, 3: -2.48811461997166764192642586468,
        4: -5.90290826836842996371446475743e-1, 5: 2.12300514481811942347288949897e1,
        6: 1.52792336328824235832596922938e1, 7: -3.32882109689848629194453265587e1,
        8: -2.03312017085086261358222928593e-2,
    },
    10: {
        0: -9.3714243008598732571704021658e-1, 3: 5.18637242884406370830023853209,
        4: 1.09143734899672957818500254654, 5: -8.14978701074692612513997267357,
        6: -1.85200656599969598641566180701e1, 7: 2.27394870993505042818970056734e1,
        8: 2.49360555267965238987089396762, 9: -3.0467644718982195003823669022,
    },
    11: {
        0: 2.27331014751653820792359768449, 3: -1.05344954667372501984066689879e1,
        4: -2.00087205822486249909675718444, 5: -1.79589318631187989172765950534e1,
        6: 2.79488845294199600508499808837e1, 7: -2.85899827713502369474065508674,
        8: -8.87285693353062954433549289258, 9: 1.23605671757943030647266201528e1,
        10: 6.43392746015763530355970484046e-1,
    },
    12: {
        0: 5.42937341165687622380535766363e-2, 5: 4.45031289275240888144113950566,
        6: 1.89151789931450038304281599044, 7: -5.8012039600105847814672114227,
        8: 3.1116436695781989440891606237e-1, 9: -1.52160949662516078556178806805e-1,
        10: 2.01365400804030348374776537501e-1, 11: 4.47106157277725905176885569043e-2,
    },
    13: {
        0: 5.61675022830479523392909219681e-2, 6: 2.53500210216624811088794765333e-1,
        7: -2.46239037470802489917441475441e-1, 8: -1.24191423263816360469010140626e-1,
        9: 1.5329179827876569731206322685e-1, 10: 8.20105229563468988491666602057e-3,
        11: 7.56789766054569976138603589584e-3, 12: -8.298e-3,
    },
    14: {
        0: 3.18346481635021405060768473261e-2, 5: 2.83009096723667755288322961402e-2,
        6: 5.35419883074385676223797384372e-2, 7: -5.49237485713909884646569340306e-2,
        10: -1.08347328697249322858509316994e-4, 11: 3.82571090835658412954920192323e-4,
        12: -3.40465008687404560802977114492e-4, 13: 1.41312443674632500278074618366e-1,
    },
    15: {
        0: -4.28896301583791923408573538692e-1, 5: -4.69762141536116384314449447206,
        6: 7.68342119606259904184240953878, 7: 4.06898981839711007970213554331,
        8: 3.56727187455281109270669543021e-1, 12: -1.39902416515901462129418009734e-3,
        13: 2.9475147891527723389556272149, 14: -9.15095847217987001081870187138,
    },
}
# b - b_hat5 (fifth-order embedded weights).
_DOP853_E5 = {
    0: 0.1312004499419488073250102996e-1, 5: -0.1225156446376204440720569753e+1,
    6: -0.4957589496572501915214079952, 7: 0.1664377182454986536961530415e+1,
    8: -0.3503288487499736816886487290, 9: 0.3341791187130174790297318841,
    10: 0.8192320648511571246570742613e-1, 11: -0.2235530786388629525884427845e-1,
}
# Third-order embedded weights b_hat3 (the estimate is b - b_hat3).
_DOP853_BHAT3 = {
    0: 0.244094488188976377952755905512, 8: 0.733846688281611857341361741547,
    11: 0.220588235294117647058823529412e-1,
}
# Dense-output coefficients for the terms F3..F6 (acting on the 16 extended stages).
_DOP853_D_ROWS = {
    0: {
        0: -0.84289382761090128651353491142e+1, 5: 0.56671495351937776962531783590,
        6: -0.30689499459498916912797304727e+1, 7: 0.23846676565120698287728149680e+1,
        8: 0.21170345824450282767155149946e+1, 9: -0.87139158377797299206789907490,
        10: 0.22404374302607882758541771650e+1, 11: 0.63157877876946881815570249290,
        12: -0.88990336451333310820698117400e-1, 13: 0.18148505520854727256656404962e+2,
        14: -0.91946323924783554000451984436e+1, 15: -0.44360363875948939664310572000e+1,
    },
    1: {
        0: 0.10427508642579134603413151009e+2, 5: 0.24228349177525818288430175319e+3,
        6: 0.16520045171727028198505394887e+3, 7: -0.37454675472269020279518312152e+3,
        8: -0.22113666853125306036270938578e+2, 9: 0.77334326684722638389603898808e+1,
        10: -0.30674084731089398182061213626e+2, 11: -0.93321305264302278729567221706e+1,
        12: 0.15697238121770843886131091075e+2, 13: -0.31139403219565177677282850411e+2,
        14: -0.93529243588444783865713862664e+1, 15: 0.35816841486394083752465898540e+2,
    },
    2: {
        0: 0.19985053242002433820987653617e+2, 5: -0.38703730874935176555105901742e+3,
        6: -0.18917813819516756882830838328e+3, 7: 0.52780815920542364900561016686e+3,
        8: -0.11573902539959630126141871134e+2, 9: 0.68812326946963000169666922661e+1,
        10: -0.10006050966910838403183860980e+1, 11: 0.77771377980534432092869265740,
        12: -0.27782057523535084065932004339e+1, 13: -0.60196695231264120758267380846e+2,
        14: 0.84320405506677161018159903784e+2, 15: 0.11992291136182789328035130030e+2,
    },
    3: {
        0: -0.25693933462703749003312586129e+2, 5: -0.15418974869023643374053993627e+3,
        6: -0.23152937917604549567536039109e+3, 7: 0.35763911791061412378285349910e+3,
        8: 0.93405324183624310003907691704e+2, 9: -0.37458323136451633156875139351e+2,
        10: 0.10409964950896230045147246184e+3, 11: 0.29840293426660503123344363579e+2,
        12: -0.43533456590011143754432175058e+2, 13: 0.96324553959188282948394950600e+2,
        14: -0.39177261675615439165231486172e+2, 15: -0.14972683625798562581422125276e+3,
    },
}


def _sparse_rows(rows: dict, shape) -> np.ndarray:
    out = np.zeros(shape)
    for i, row in rows.items():
        for j, value in row.items():
            out[i, j] = value
    return out


def _dop853_dense_matrix(b, d) -> np.ndarray:
    """Monomial form (16, 7) of Hairer's DOP853 interpolant.

    Hairer writes ``y(theta) = y_old + sum_j F_j * phi_j(theta)`` with
    ``phi_j = theta**(1 + j//2) * (1-theta)**((j+1)//2)`` (j = 0..6), ``F_0 = dy``,
    ``F_1 = h f_old - dy``, ``F_2 = 2 dy - h (f_old + f_new)``, ``F_{3..6} = h D @ K`` with
    ``dy = h b @ K``. Each ``F_j = h w_j @ K`` is linear in the stages; expanding ``phi_j``
    in powers of theta gives ``p = sum_j outer(w_j, monomial coefficients of phi_j)``.
    """
    n = d.shape[1]
    bb, f_old, f_new = np.zeros(n), np.zeros(n), np.zeros(n)
    bb[:len(b)], f_old[0], f_new[len(b)] = b, 1.0, 1.0
    weights = [bb, f_old - bb, 2 * bb - f_old - f_new, *d]
    p = np.zeros((n, len(weights)))
    poly = np.polynomial.Polynomial
    for j, w in enumerate(weights):
        phi = poly([0, 1]) ** (1 + j // 2) * poly([1, -1]) ** ((j + 1) // 2)
        coef = np.zeros(len(weights) + 1)
        coef[:len(phi.coef)] = phi.coef
        p += np.outer(w, coef[1:])
    return p


_DOP853_S = 12
_DOP853_A = _sparse_rows(_DOP853_A_ROWS, (16, 16))
_DOP853_B = _DOP853_A[_DOP853_S, :_DOP853_S]

#: Dormand-Prince 8(5,3) (Hairer's DOP853): 12 stages + f(t_new, y_new) per step, error
#: estimate combining the 5th- and 3rd-order embedded formulas, 7th-order dense output
#: with 3 extra stages.
DOP853 = Tableau(
    name="dop853", order=8, error_order=7,
    c=_DOP853_C[:_DOP853_S],
    a=_DOP853_A[:_DOP853_S, :_DOP853_S],
    b=_DOP853_B,
    e=np.array([_DOP853_E5.get(i, 0.0) for i in range(_DOP853_S)]),
    e3=_DOP853_B - np.array([_DOP853_BHAT3.get(i, 0.0) for i in range(_DOP853_S)]),
    fsal=False,
    dense_order=7,
    p=_dop853_dense_matrix(_DOP853_B, _sparse_rows(_DOP853_D_ROWS, (4, 16))),
    c_extra=_DOP853_C[_DOP853_S + 1:],
    a_extra=_DOP853_A[_DOP853_S + 1:],
)

#: All methods by name.
TABLEAUX: dict[str, Tableau] = {"rk4": RK4, "dopri5": DOPRI5, "dop853": DOP853}
