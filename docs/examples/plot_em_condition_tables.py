"""
Conditioning of the energy–momentum schemes: Tables II–V of paper 004
=====================================================================

Paper 004 compares the condition number of the Newton iteration matrix of its two energy–momentum
schemes: the *constrained* scheme (positions and multipliers, an index-3 saddle point whose singular
values scale like 1/Δt and Δt², so its condition grows like Δt⁻³) and the *reduced* scheme (the
discrete null space method: only the independent velocities, so the condition stays of order one).
This example computes the condition number at the instant of each table -- Table V states t = 0.04 s;
Table III's values are met at t = 0.1 s (the first snapshot of Fig. 12), Table IV's near t = 0.03 s (the
reduced matrix changes as the pairs slide; docs/theory/paper004.md) -- for the paper's four examples and
time steps, with the paper's reduced unknowns (eqs 143-154) and unscaled closure rows (the solver's
defaults, joint-point unknowns and balanced closure rows, give the same solution with other numbers:
Table V ~12 for every dt), and prints it beside the paper's values.
"""
import matplotlib.pyplot as plt
import numpy as np

from multibody.integrate.energy_momentum import EnergyMomentumStepper
from multibody.models.spatial_models import cylindrical_pair, gyro_top, planar_pair, six_body_linkage

# (example, factory, time steps, time of the table, the paper's constrained and reduced values)
TABLES = [
    ("gyro top (Table II)", gyro_top, (5e-2, 5e-3, 5e-4), 0.0, (1.6e4, 1.6e7, 1.6e10), (8, 8, 8)),
    ("cylindrical pair (Table III, t = 0.1 s)", cylindrical_pair, (1e-2, 1e-3, 1e-4), 0.1,
     (3.6e11, 3.6e14, 3.6e17), (360, 358, 358)),
    ("planar pair (Table IV, t = 0.03 s)", planar_pair, (1e-2, 1e-3, 1e-4), 0.03, (4.8e10, 4.6e13, 4.6e16), (730, 800, 800)),
    ("six-body linkage (Table V, t = 0.04 s)", six_body_linkage, (1e-2, 1e-3, 1e-4), 0.04,
     (1.6e5, 1.5e8, 1.5e11), (19, 10, 58)),
]


def condition(factory, scheme, dt, t):
    """Condition number of the iteration matrix in the last Newton iteration of the step that ends at t
    (the steps before it are taken without the condition estimate, which costs an SVD per iteration)."""
    model = factory()
    q, v = model.q0, model.v0
    steps = max(1, int(round(t / dt)))
    options = {"unknowns": "paper", "closure_scaling": "none"}
    stepper = EnergyMomentumStepper(model, scheme=scheme, dt=dt, condition=False, **options)
    for k in range(steps - 1):
        q, v = stepper.step(q, v, k * dt)
    stepper.want_cond = True
    stepper.step(q, v, (steps - 1) * dt)
    return stepper.condition


fig, axes = plt.subplots(1, len(TABLES), figsize=(13, 3.4), sharey=True)
for ax, (name, factory, dts, t, paper_c, paper_r) in zip(axes, TABLES):
    ours_c = [condition(factory, "constrained", dt, t) for dt in dts]
    ours_r = [condition(factory, "reduced", dt, t) for dt in dts]
    print(name)
    for dt, c, pc, r, pr in zip(dts, ours_c, paper_c, ours_r, paper_r):
        print(f"  dt {dt:7.0e}: constrained {c:9.2e} (paper {pc:7.1e})   reduced {r:9.3g} (paper {pr})")
    ax.loglog(dts, ours_c, "o-", color="C0", label="constrained")
    ax.loglog(dts, paper_c, "x:", color="C0", label="constrained, paper")
    ax.loglog(dts, ours_r, "s-", color="C1", label="reduced")
    ax.loglog(dts, paper_r, "+:", color="C1", label="reduced, paper")
    slope = np.polyfit(np.log(dts), np.log(ours_c), 1)[0]
    ax.set_title(f"{name}\nconstrained ~ Δt^{slope:.2f}", fontsize=9)
    ax.set_xlabel("Δt [s]")
    ax.grid(True, which="major", lw=0.3)
axes[0].set_ylabel("condition number of the iteration matrix")
axes[0].legend(fontsize=7)
fig.tight_layout()
plt.show()
