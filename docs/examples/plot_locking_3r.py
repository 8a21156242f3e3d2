"""
3R pendulum: joints locked during the motion (paper 002)
========================================================

Paper 002 Sect. 6: a planar 3R pendulum whose joint 2 is locked at 0.8 s and joint 3 at 1.3 s.
At each event the velocity jumps so that the momentum of the joints that stay free is continuous
(eq. 24); the kinetic energy drops (a perfectly inelastic lock).
"""
import matplotlib.pyplot as plt

from multibody import simulate
from multibody.models import MODELS

entry = MODELS["three-r-pendulum-locking"]
result = simulate(entry.factory(), t_end=2.0, events=list(entry.events))
for event in result.events:
    print(f"t = {event['t']:.3f} s: energy {event['energy_before']:.4f} -> {event['energy_after']:.4f} J, "
          f"momentum continuity error {event['momentum_continuity_error']:.1e}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
for c in result.coordinate_names:
    ax1.plot(result.t, result.column("v", c), label=c)
for event in result.events:
    ax1.axvline(event["t"], color="k", lw=0.5)
ax1.set_xlabel("time [s]")
ax1.set_ylabel("joint rate [rad/s]")
ax1.legend()
ax2.plot(result.t, result["energy"][:, 0], label="kinetic")
ax2.plot(result.t, result["energy"][:, 2], label="total")
ax2.set_xlabel("time [s]")
ax2.set_ylabel("energy [J]")
ax2.legend()
fig.tight_layout()
