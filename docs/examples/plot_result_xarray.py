"""
Results as xarray and pandas
============================

A spherical pendulum (a disk on a ball joint, spatial model built with
:class:`multibody.SpatialModelBuilder`) is simulated; its :class:`multibody.Result` is read as an
``xarray.Dataset`` (time and coordinate labels as coordinates, CF units) and as a ``pandas``
DataFrame. Needs the ``data`` extra.
"""
import matplotlib.pyplot as plt

import multibody as mb

b = mb.SpatialModelBuilder("disk-on-a-ball-joint")
b.add_body("disk", mass=1.0, inertia=(0.2, 0.4, 0.2), position=(0.2, 0, 0.5), omega=(0, 0, 5.0))
b.spherical("tip", "ground", "disk", point=(0, 0, 0))
b.gravity()
result = mb.simulate(b.build(), t_end=1.0, options=mb.RunOptions(output_step=0.01))
print(result)

# %%
# xarray: select a coordinate by its label; the units travel with the data.
ds = result.to_xarray()
height = ds.q.sel(coordinate="disk.z")
print(ds)

# %%
# pandas: one row per stored time, columns (series, label).
df = result.to_dataframe()
print(df["energy"].head())

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3.2))
height.plot(ax=ax1)
ax1.set_title("centre of mass height")
ax1.set_ylabel("disk.z [m]")
df["energy"].plot(ax=ax2)
ax2.set_title("energy [J]")
fig.tight_layout()
