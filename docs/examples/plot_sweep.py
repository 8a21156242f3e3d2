"""
A parameter sweep on a local Dask cluster
=========================================

``multibody sweep`` runs one scenario per parameter value on Dask workers (here a local cluster of
one worker; ``--scheduler tcp://host:8786`` uses a running cluster) and writes one row per
scenario: its parameters, status, cost, accuracy measures and final coordinates
(:func:`multibody.sweep.run.sweep` from Python). Here the point-mass pendulum of paper 000
(length 1 m) is started with increasing vertical speeds; every final state stays on the circle
:math:`x^2 + z^2 = 1`. Needs the ``sweep`` extra.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

out = Path(tempfile.mkdtemp()) / "pendulum-sweep.csv"
command = [sys.executable, "-m", "multibody", "sweep", "pendulum", "--param", "v0:z=0.5,1,2,3,4,5",
           "--t-end", "1", "--workers", "1", "--out", str(out)]
print(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
pd.set_option("display.width", 120)
table = pd.read_csv(out)
print(table[["v0:z", "status", "steps", "energy_drift_rel", "constraint_violation_max", "q:x", "q:z"]])
radius = np.hypot(table["q:x"], table["q:z"])
print(f"largest | |q| - 1 | over the scenarios: {np.max(np.abs(radius - 1)):.1e} m")

fig, ax = plt.subplots(figsize=(4.5, 4))
circle = np.linspace(0, 2 * np.pi, 200)
ax.plot(np.cos(circle), np.sin(circle), color="0.8")
ax.scatter(table["q:x"], table["q:z"], c=table["v0:z"], cmap="viridis")
for _, row in table.iterrows():
    ax.annotate(f"{row['v0:z']:g}", (row["q:x"], row["q:z"]), fontsize=8)
ax.set_aspect("equal")
ax.set_xlabel("x [m]")
ax.set_ylabel("z [m]")
ax.set_title("final positions at t = 1 s\n(label: initial vertical speed [m/s])", fontsize=9)
fig.tight_layout()
