# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # msim quick start
#
# Build a cloth, step it, watch its energy, branch a state into several integrators and
# draw the result. Everything is in SI units: metres, kilograms, seconds, newtons, joules.

# %%
# %matplotlib inline
import numpy as np
import msim
import msim.plot

mesh = msim.mesh.cloth_grid(20, 20, size=1.0)  # 1 m x 1 m, structural + shear + bending
sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1000.0, fixed=[0, 19])
sim

# %% [markdown]
# The ten integrators and their options (`msim.METHODS` holds the options with their
# defaults and documentation):

# %%
for name, summary in msim.methods.SUMMARY.items():
    print(f"{name:<20} {summary}")
    for option, spec in msim.METHODS[name].items():
        print(f"{'':<22}{option} = {spec.default!r}")

# %% [markdown]
# One step returns a `StepInfo`; `energy()` is in joules.

# %%
info = sim.step(1e-3, method="symplectic_euler")
print(info)
sim.energy()

# %% [markdown]
# `simulate` records frames and energies (in Jupyter, `progress=True` adds a progress bar).
# With symplectic Euler at h = 1 ms the cloth swings: kinetic and gravitational energy trade
# places and the total stays flat (this integrator has no numerical damping, and the cloth
# none set). Each run has one colour, each energy term one line style.

# %%
state = sim.get_state()
traj = sim.simulate(1500, 1e-3, "symplectic_euler", record_every=15)
fig = msim.plot.energy(traj, terms=("kinetic", "spring", "gravity", "total"))
fig.set_size_inches(9, 4.5)
fig.axes[0].set_title("20x20 cloth pinned at two corners, falling from horizontal");

# %%
msim.plot.frame(traj.positions[-1], mesh.faces, fixed=[0, 19], title="after 1.5 s");

# %% [markdown]
# A picture shows one side of one instant. `msim.view` shows the whole run in 3D: drag to
# orbit, scroll to zoom, press play or drag the frame slider. Fixed vertices are red dots;
# `color="strain"` colours each vertex by the mean stretch (l - r) / r of its springs, blue
# compressed, red stretched. It needs the `view` extra (`pip install "msim[view]"`) and a
# live Jupyter kernel: on the documentation site this cell shows only its text, and the
# figure above is the static picture.

# %%
view = msim.view(traj, mesh.faces, system=sim, color="strain")
view

# %% [markdown]
# Branch the saved state into six of the methods (notebooks 02 and 05 take all ten) and
# compare them over the same second of simulated time, each at a step it is meant for: the
# explicit ones at 1 ms, the implicit ones at 1/30 s (a video frame). Explicit Euler diverges
# even at 1 ms: that is the lesson (notebook 02 shows why).

# %%
sim.set_state(state)
dt = {"explicit_euler": 1e-3, "symplectic_euler": 1e-3, "implicit_euler": 1 / 30,
      "linearized_implicit": 1 / 30, "fms": 1 / 30, "xpbd": 1 / 30}
steps = {method: round(1.0 / h) for method, h in dt.items()}
table = msim.compare(sim, list(dt), steps=steps, dt=dt)
table

# %% [markdown]
# Reading the table (energies in joules, `s_per_step` in seconds):
#
# * `diverged` is the step at which explicit Euler blew up; the other runs finished.
# * `relative_drift` is the change of total energy over one scale for every run from this
#   state, `msim.energy_scale(sim)`: the kinetic and spring energy plus the energy the free
#   mass releases when lowered by the cloth's size (about 39 J here). It is about 0 for
#   symplectic Euler and clearly negative for the implicit methods, which damp the motion
#   numerically (more at larger h): a third of that scale in one second.
# * `max_strain` is the largest relative stretch of a spring, (l - r) / r. XPBD with its
#   default 10 sweeps per step at h = 1/30 leaves this stiff cloth far too stretched:
#   a stiff cloth needs more sweeps or substeps (notebook 02).
# * `iterations` is the mean inner iteration count (conjugate gradient iterations for the
#   linearised method, local-global iterations for FMS, sweeps for XPBD).
