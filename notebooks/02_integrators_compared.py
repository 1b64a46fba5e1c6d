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
# # Integrators compared
#
# One 15 x 15 cloth, 1 m x 1 m (structural, shear and bending springs, k = 1000 N/m,
# 10 g per vertex, pinned at two corners, starting horizontal at rest) and msim's ten
# methods: where each is stable, what it does to the energy, how stiff it really is, and
# what it costs.

# %%
# %matplotlib inline
import time

import matplotlib.pyplot as plt
import numpy as np

import msim
import msim.plot
from msim.strain import max_strain, spring_strain

MESH = msim.mesh.cloth_grid(15, 15)
METHODS = list(msim.METHODS)  # all ten, in msim.METHODS's order


def make(**kwargs):
    return msim.System(MESH.vertices, MESH.edges, mass=0.01, stiffness=1000.0,
                       fixed=[0, 14], **kwargs)


# %% [markdown]
# ## Stability against the time step
#
# The stiffest mode of this cloth has omega ~ 2 sqrt(4 k / m) ~ 1300 rad/s. On a single
# mode, one explicit Euler step multiplies the amplitude by sqrt(1 + (omega h)^2) > 1, so
# explicit Euler diverges at *every* h, only more slowly at small h; symplectic Euler
# keeps the amplitude bounded while h < 2 / omega ~ 1.5 ms and blows up beyond; implicit
# Euler multiplies it by 1 / sqrt(1 + (omega h)^2) < 1 and is stable at every h.
#
# Each cell is one run from the same start: green stable, amber a total energy change
# above 10 % of the energy in motion (the number is that relative change), red diverged
# (the step at which it did). Explicit and symplectic Euler are cheap, so they run for 1 s,
# long enough for explicit Euler's slow growth at h = 0.1 ms to show; the others run for
# 0.2 s.

# %%
dts = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 1 / 30]
duration = {m: 1.0 if m.endswith("explicit_euler") or m == "symplectic_euler" else 0.2
            for m in METHODS}
rows = msim.stability(make, METHODS, dts, duration=duration)
fig = msim.plot.stability_map(rows)
fig.set_size_inches(8, 4.5)

# %% [markdown]
# What to see: explicit Euler is red everywhere; symplectic Euler and velocity Verlet are
# green up to 1 ms and red from 3 ms, just as 2 / omega predicts; RK4, stable up to
# 2 sqrt(2) / omega ~ 2.2 ms (`msim.scenes.stability_limit`), gains energy at 3 ms (amber)
# and diverges from 10 ms. Implicit and linearised implicit Euler, FMS and BDF2 never
# diverge, but their drift is negative and grows with h: they lose energy (numerical
# damping), BDF2 much less than implicit Euler at small h (a thousandth of its loss at
# 0.1 ms, a third at 1/30 s). Implicit midpoint never
# diverges either, and damps nothing: its small drift is positive. XPBD's drift at h = 1/30
# is *positive*: with 10 sweeps per step it leaves the springs overstretched, and the
# spring energy measured with the true k is large (see below).

# %% [markdown]
# ## Energy at each method's natural step
#
# Six of the methods (notebook 05 compares RK4, velocity Verlet, implicit midpoint and BDF2
# over a long run), each at a step it is meant for, for 1.5 s. XPBD runs with 100 substeps
# of one sweep each (Macklin et al. 2019, *Small steps in physics simulation*), the way it
# is used for stiff cloth.

# %%
natural = {"explicit_euler": (1e-4, {}), "symplectic_euler": (1e-3, {}),
           "implicit_euler": (1 / 30, {}), "linearized_implicit": (1 / 30, {}),
           "fms": (1 / 30, {}), "xpbd": (1 / 30, {"substeps": 100, "iterations": 1})}
runs = [make().simulate(round(1.5 / dt), dt, m, record_every=max(1, round(0.02 / dt)),
                        on_divergence="stop", **options)
        for m, (dt, options) in natural.items()]
fig = msim.plot.energy(runs)
fig.set_size_inches(10, 4.5)
ax = fig.axes[0]
ax.set_ylim(-15, 3)
ax.set_ylabel("total energy [J] (0 at the start)")
ax.set_title("total energy; explicit Euler leaves the plot at the top");


# %% [markdown]
# What to see:
#
# * **Explicit Euler** gains energy until it diverges, even at h = 0.1 ms: its amplitude
#   grows by sqrt(1 + (omega h)^2) every step, so the stiff modes explode eventually.
# * **Symplectic Euler** keeps the total energy in a narrow band around its start (it
#   conserves a nearby "shadow" energy exactly), as long as h < 2 / omega.
# * **Implicit Euler** loses energy: each step damps a mode by 1 / sqrt(1 + (omega h)^2),
#   which at h = 1/30 kills the stiff (stretching) modes at once and slowly damps even the
#   swinging. This numerical damping is what buys its stability. msim's `implicit_euler`
#   runs one Newton iteration per step by default (the course convention), the
#   linearised method one linear solve on velocities, and FMS 10 local-global iterations
#   on the same potential: all three damp by similar amounts, but differently, since none
#   of them solves the step exactly.
# * **FMS**'s total energy is not even monotone: it loses energy faster than Newton at
#   first, then regains about 1 J between 0.8 s and 1.2 s. Only an exactly solved step
#   with a convex energy is guaranteed to lose energy; springs are not convex (they
#   buckle under compression), and 10 iterations leave the step unconverged.
# * **XPBD** with small substeps loses the least energy of the methods at h = 1/30:
#   each substep is a short implicit step, whose numerical damping scales with its
#   length.

# %% [markdown]
# ## Is XPBD's stiffness independent of the iteration count?
#
# Macklin et al. (2016) give each spring a compliance 1/k and a Lagrange multiplier, so
# that the answer XPBD *converges to* does not depend on the iteration count or the
# step (plain PBD gets stiffer with every extra iteration). With too few sweeps it has
# not converged, and the cloth is softer than k. Below, the cloth hangs until it is
# nearly at rest (ether damping 3 /s, 3 s at h = 1/30), and we measure the largest
# strain against the number of Gauss-Seidel sweeps per step. Implicit Euler solved by
# Newton to a tight tolerance gives the equilibrium of springs of stiffness k.

# %%
def strain_at_rest(method, **options):
    sim = make(damping=3.0)
    sim.simulate(90, 1 / 30, method, **options)
    return max_strain(sim)


exact = strain_at_rest("implicit_euler", max_iterations=20, tol=1e-6)
sweeps = [3, 10, 30, 100, 300]
xpbd = [strain_at_rest("xpbd", iterations=n) for n in sweeps]
substeps = strain_at_rest("xpbd", iterations=1, substeps=100)

fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
ax.loglog(sweeps, xpbd, "o-", label="XPBD, sweeps per step")
ax.axhline(exact, color="k", linestyle="--", label="implicit Euler (Newton, converged)")
# drawn last and thicker: it lies on the implicit Euler line
ax.axhline(substeps, color="tab:green", linestyle=":", linewidth=3,
           label="XPBD, 100 substeps x 1 sweep")
ax.set_xlabel("Gauss-Seidel sweeps per step (h = 1/30 s)")
ax.set_ylabel("largest spring strain at rest")
ax.set_title("the hanging cloth at rest")
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))  # beside the curves
ax.grid(True, which="both", alpha=0.3)
plt.show()
print(f"exact {exact:.4f}; XPBD " +
      ", ".join(f"{n} sweeps {s:.4f}" for n, s in zip(sweeps, xpbd)) +
      f"; 100 substeps {substeps:.4f}")

# %% [markdown]
# What to see: with 3 or 10 sweeps the cloth hangs 10 to 30 times more stretched than
# springs of stiffness k would allow; the strain falls as the sweeps grow, and with about
# 300 sweeps (or with 100 substeps of one sweep, three times cheaper) it is within a few
# percent of the implicit Euler answer. So XPBD's stiffness does not depend on the
# iteration count *once it has converged*; a stiff cloth with few sweeps is simply
# unconverged. The last percent does not vanish: each XPBD update uses the spring
# directions of that moment and drops the geometric-stiffness term of the Newton step,
# so even many sweeps land near, not exactly on, the implicit Euler solution.

# %% [markdown]
# ## How stiff is the cloth while it moves?
#
# Strain (l - r) / r of every spring after 1 s at h = 1/30, on one colour scale: FMS with
# its default 10 iterations against XPBD with 10 sweeps in one step. FMS is never far
# from the stiffness k (its iterations minimise the same potential as implicit Euler);
# XPBD with so few sweeps on 1000+ springs is far from converged, so the cloth stretches.

# %%
fig = plt.figure(figsize=(11, 4.5), layout="constrained")
frames = {}
for method in ["fms", "xpbd"]:
    sim = make()
    sim.simulate(30, 1 / 30, method, iterations=10)
    frames[method] = sim.positions, spring_strain(sim)
limit = max(np.abs(strain).max() for _, strain in frames.values())
for k, (method, (x, strain)) in enumerate(frames.items()):
    ax = fig.add_subplot(1, 2, k + 1, projection="3d")
    msim.plot.frame(x, None, MESH.edges, strain=strain, strain_limit=limit,
                    fixed=[0, 14], ax=ax,
                    title=f"{method}, 10 iterations: max strain {strain.max():.2f}")


# %% [markdown]
# ## What it costs, in the style of the course report's table
#
# A course report implementing Liu et al. 2013 timed explicit Euler (1000 steps) at 0.057 s, Newton (at most
# 100 iterations) at 5.5 s and FMS with 10 / 100 / 1000 iterations at 0.008 / 0.08 /
# 0.8 s, on its own mesh and machine. Here are the same runs on this 15 x 15 cloth in
# msim (one step at h = 1/30 for Newton and FMS). The machines and meshes differ, so
# compare the ratios, not the numbers. FMS's cost grows linearly with its iterations (one
# prefactored back-substitution each), as in the report. Newton refactors a 3n x 3n
# matrix at every iteration, but here it stops once converged (the last column), so it
# costs less than 1000 FMS iterations; the report's Newton, capped at 100 iterations,
# was 7 times slower than them (it does not say how many iterations it ran).

# %%
def seconds(method, steps=1, dt=1 / 30, **options):
    sim = make()
    start = time.perf_counter()
    infos = [sim.step(dt, method, **options) for _ in range(steps)]
    return time.perf_counter() - start, infos[-1].iterations


rows = [("explicit Euler, 1000 steps (h = 0.1 ms)", 0.057,
         seconds("explicit_euler", 1000, 1e-4)),
        ("Newton, max 100 iterations", 5.5,
         seconds("implicit_euler", max_iterations=100, tol=1e-8, line_search=True))]
rows += [(f"FMS, {n} iterations", report, seconds("fms", iterations=n))
         for n, report in [(10, 0.008), (100, 0.08), (1000, 0.8)]]
print(f"{'run':<40} {'report [s]':>10} {'msim [s]':>10} {'iterations':>10}")
for name, report, (ours, iterations) in rows:
    print(f"{name:<40} {report:>10.3g} {ours:>10.3g} {iterations:>10}")

# %% [markdown]
# ## The motion
#
# Every other step of FMS at h = 1/30 s for 1.33 s: 21 frames.

# %%
traj = make().simulate(40, 1 / 30, "fms", record_every=2)
anim = msim.plot.animate(traj, MESH.faces)
plt.close(anim._fig)
msim.plot.jshtml(anim)  # the player, with controls that need no network
