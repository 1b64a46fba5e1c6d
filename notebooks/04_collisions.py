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
# # Collisions
#
# Penalty methods (explicit, symplectic, implicit and linearised implicit Euler) feel a
# contact energy k_c/2 depth^2, so a vertex sinks a little into what it touches, by about
# its load / k_c at rest; projection methods (FMS, XPBD) put vertices back onto the
# surface, so nothing ever ends up inside. Spheres are touched at `contact_scale` (1.1)
# times their radius: a margin that keeps the flat triangles between vertices, which cut
# chords through a sphere their vertices rest on, outside the sphere's radius.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

import msim
import msim.plot
from msim import scenes


def sphere_wire(ax, centre, radius):
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 24), np.linspace(0, np.pi, 12))
    x = centre[0] + radius * np.cos(u) * np.sin(v)
    y = centre[1] + radius * np.cos(v)
    z = centre[2] + radius * np.sin(u) * np.sin(v)
    ax.plot_wireframe(x, z, y, color="grey", linewidth=0.4)  # msim.plot draws y up


# %% [markdown]
# ## A cloth dropped on a sphere, two ways

# %%
fig = plt.figure(figsize=(10, 4), layout="constrained")
depths = {}
for k, method in enumerate(["implicit_euler", "xpbd"]):
    scene = scenes.cloth_on_sphere(n=15)
    sim = scene.system
    centre, radius = sim.spheres[0, :3], sim.spheres[0, 3]
    depth, energy = [], []
    for _ in range(45):
        sim.step(1 / 30, method)
        gap = np.linalg.norm(sim.positions - centre, axis=1).min()
        depth.append(sim.contact_scale * radius - gap)
        energy.append(sim.energy()["collision"])
    depths[method] = (np.array(depth), np.array(energy))
    ax = fig.add_subplot(1, 2, k + 1, projection="3d")
    msim.plot.frame(sim.positions, scene.faces, ax=ax, title=f"{method}, t = 1.5 s")
    sphere_wire(ax, centre, radius)

# %% [markdown]
# Depth below the contact surface (s r) and the contact energy over time: the penalty
# method sinks by a fraction of a millimetre and stores energy in the contact; XPBD
# projects, so its depth is zero to rounding and its contact energy vanishes. (FMS
# projects once after its iterations; its global step cannot see the sphere, and at
# h = 1/30 this stiff cloth, which falls 9 cm into the sphere in one step, is thrown off
# by that projection: use h = 1/120 with FMS here, or XPBD.)

# %%
fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5), layout="constrained")
t = np.arange(1, 46) / 30
for method, (depth, energy) in depths.items():
    a.plot(t, 1e3 * np.maximum(depth, 0), label=method)
    b.plot(t, energy, label=method)
a.set_xlabel("time [s]"); a.set_ylabel("depth [mm]"); a.legend()
b.set_xlabel("time [s]"); b.set_ylabel("collision energy [J]"); b.legend();

# %% [markdown]
# ## A jelly cube and a pushed curtain
#
# The cube is a tetrahedral lattice (every tet edge a spring) dropped on an edge onto the
# ground; the curtain is pushed by a sphere that a script moves 0.5 m/s along z before
# every step.

# %%
fig = plt.figure(figsize=(10, 4), layout="constrained")
cube = scenes.jelly_cube(n=4)
cube.run(45, "implicit_euler")
msim.plot.frame(cube.system.positions, cube.faces,
                ax=fig.add_subplot(1, 2, 1, projection="3d"),
                title="jelly cube at rest (implicit Euler)")
push = scenes.pushed_cloth(n=15)
push.run(36, "fms")
ax = fig.add_subplot(1, 2, 2, projection="3d")
msim.plot.frame(push.system.positions, push.faces, fixed=range(15), ax=ax,
                title="curtain pushed by a sphere (FMS), t = 1.2 s")
sphere_wire(ax, push.system.spheres[0, :3], push.system.spheres[0, 3])

# %% [markdown]
# The same push in 3D (`msim.view`, with the `view` extra): rotate it to see the curtain
# bulge around the sphere, and play it. The sphere moves, so it is given per frame,
# (frames, 1, 4): the scene's script puts its centre at z = -0.3 + 0.5 t before each step,
# so the frame at time t shows the sphere where the step that ended there pushed from.

# %%
push = scenes.pushed_cloth(n=15)
traj = push.run(36, "fms")
h = push.dt_for("fms")
spheres = [[[0.0, 0.5, -0.3 + 0.5 * max(t - h, 0.0), 0.15]] for t in traj.times]
msim.view(traj, push.faces, system=push.system, spheres=spheres, color="strain")

# %% [markdown]
# ## Coulomb friction
#
# A vertex sliding on the ground at v0 loses mu g h of speed each step, so it stops after
# v0^2 / (2 mu g) less half a step's travel.

# %%
g, v0, h = 9.81, 1.0, 1 / 120
print(f"{'mu':>4} {'predicted [m]':>14} {'fms [m]':>9} {'implicit_euler [m]':>19}")
for mu in (0.2, 0.4, 0.8):
    travel = []
    for method in ("fms", "implicit_euler"):
        sim = msim.System([[0.0, 0.0, 0.0]], np.zeros((0, 2), int),
                          planes=[[0, 1, 0, 0]], friction=mu, contact_stiffness=1e5)
        sim.step(h, method)
        sim.velocities = [[v0, 0, 0]]
        start = sim.positions[0, 0]
        sim.simulate(120, h, method)
        travel.append(sim.positions[0, 0] - start)
    print(f"{mu:>4} {v0**2 / (2 * mu * g) - v0 * h / 2:>14.4f} {travel[0]:>9.4f} "
          f"{travel[1]:>19.4f}")
