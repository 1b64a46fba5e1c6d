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
# Every method but XPBD feels a contact energy k_c/2 depth^2 (the implicit methods, FMS
# included, minimise it within their incremental potential g), so a vertex sinks a little into
# what it touches, by about its load / k_c at rest; XPBD projects vertices back onto the
# surface inside its iterations, so nothing ends up inside. Spheres are touched at
# `contact_scale` (1.1) times their radius: a margin that keeps the flat triangles between
# vertices, which cut chords through a sphere their vertices rest on, outside the sphere's
# radius. Friction takes its budget from the normal force the contact carries, inside every
# step (the contact guide derives each form).

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
# projects, so its depth is zero to rounding and its contact energy vanishes.

# %%
fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5), layout="constrained")
t = np.arange(1, 46) / 30
for method, (depth, energy) in depths.items():
    a.plot(t, 1e3 * np.maximum(depth, 0), label=method)
    b.plot(t, energy, label=method)
a.set_xlabel("time [s]"); a.set_ylabel("depth [mm]"); a.legend()
b.set_xlabel("time [s]"); b.set_ylabel("collision energy [J]"); b.legend();

# %% [markdown]
# ## Passive contact: no method gains energy on a sphere that does not move
#
# Nothing does work on the draped cloth: the sphere is fixed, friction only opposes the slip,
# the ether drag and the implicit steps' numerical damping remove energy. So the total energy
# (kinetic + spring + gravity + contact) can only fall, in every method at the scene's own
# step with its default options. Explicit Euler is left out: it grows every undamped mode at
# every step, contact or not. The methods without numerical damping (symplectic Euler, RK4,
# velocity Verlet, implicit midpoint) keep the cloth bouncing on the elastic penalty much
# longer, at far smaller steps.

# %%
runs = []
for method in ["implicit_euler", "fms", "xpbd", "linearized_implicit", "bdf2",
               "symplectic_euler"]:
    scene = scenes.cloth_on_sphere(n=15)
    steps = round(3.0 / scene.dt_for(method))
    runs.append(scene.run(steps, method, record_every=max(1, steps // 90)))
fig = msim.plot.energy(runs)
fig.axes[0].set_ylim(0, 2 * runs[0].energies["total"][0])  # linearised Euler's spike is off top
fig.axes[0].set_title("cloth on a sphere: the total energy ends below its start");

# %%
for traj in runs:
    total = traj.energies["total"]
    print(f"{traj.method:>20}: start {total[0]:.2f} J, largest {total.max():.2f} J, "
          f"end {total[-1]:.2f} J")

# %% [markdown]
# Linearised implicit Euler linearises the contact where the step starts, before an arriving
# vertex touches the sphere, so the step after the impact starts deep in the penalty and
# throws the vertex out: its largest energy is that one step's. Every run ends below its start.

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
# A vertex resting on the ground, where the contact carries its weight m g, pushed along it at
# v0: kinetic friction takes mu g h off its speed each step, so an implicit step, which moves
# with the new speed, stops it after v0^2 / (2 mu g) less half a step's travel.

# %%
g, v0, h, m, kc = 9.81, 1.0, 1 / 120, 0.01, 1e5
print(f"{'mu':>4} {'predicted [m]':>14} {'fms [m]':>9} {'implicit_euler [m]':>19}")
for mu in (0.2, 0.4, 0.8):
    travel = []
    for method in ("fms", "implicit_euler"):
        sim = msim.System([[0.0, -m * g / kc, 0.0]], np.zeros((0, 2), int), mass=m,
                          planes=[[0, 1, 0, 0]], friction=mu, contact_stiffness=kc)
        sim.velocities = [[v0, 0, 0]]
        sim.simulate(120, h, method)
        travel.append(sim.positions[0, 0])
    print(f"{mu:>4} {v0**2 / (2 * mu * g) - v0 * h / 2:>14.4f} {travel[0]:>9.4f} "
          f"{travel[1]:>19.4f}")
