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
# # Time integrators: order, energy, and the solvers of an implicit step
#
# Three questions about the integrators a student compares: how fast does each one's error
# fall as the step shrinks (its order), what does each one do to the energy over a long run,
# and, for the implicit ones, how fast do the solvers of one step get to its answer. The
# computations are in `msim.accuracy`; `tests/test_accuracy.py` checks the orders and the
# solvers' answers.

# %%
# %matplotlib inline
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np

import msim
import msim.plot
from msim.accuracy import (OrderWarning, global_error, order, oscillator, oscillator_positions,
                           reference_positions, solver_costs)
from msim.experiments import exact_objective, exact_step
from msim.scenes import omega_max

NEWTON = {"iterations": 20, "tol": 1e-10}  # each implicit step solved, not approximated
METHODS = {"explicit_euler": {}, "symplectic_euler": {}, "velocity_verlet": {}, "rk4": {},
           "implicit_euler": NEWTON, "implicit_midpoint": NEWTON, "bdf2": NEWTON}

# %% [markdown]
# ## Order of accuracy
#
# A method of order $p$ makes a local error $O(h^{p+1})$ per step, and over the $T/h$ steps
# to a fixed time $T$ a global error $e(h) \approx C h^p$: a line of slope $p$ on a log-log
# plot (Hairer, Norsett and Wanner, *Solving ODEs I*, II.3). Explicit, symplectic and implicit
# Euler have $p = 1$; velocity Verlet, implicit midpoint and BDF2 $p = 2$; classical RK4
# $p = 4$. The implicit steps are solved by Newton to $|\nabla g| < 10^{-10}$ N, so what is
# measured is the integrator, not an unfinished solve.
#
# First a linear oscillator with a closed form: one vertex of 1 kg on a spring of 100 N/m
# (omega = 10 rad/s), released 0.1 m stretched, compared at T = 1 s with
# $x(t) = L + 0.1 \cos(\omega t)$. The steps run from $\omega h = 0.025$ down to 0.003.
# `msim.plot.order_of_accuracy` fits each slope with `msim.accuracy.order`, which first
# checks that the steps are in the asymptotic range: the local slopes between successive
# steps must agree (within 0.1) with each other and with the fit.

# %%
dts = 1.0 / np.array([400, 800, 1600, 3200])
exact = oscillator_positions(1.0)
errors = {m: global_error(oscillator, m, dts, 1.0, exact, **o) for m, o in METHODS.items()}
fig = msim.plot.order_of_accuracy(dts, errors)
fig.axes[0].set_title("linear oscillator (omega = 10 rad/s): error at T = 1 s");

# %% [markdown]
# The slopes are the textbook orders to within a few hundredths, and every method's steps are
# in its asymptotic range (a method out of it would be labelled "not asymptotic" and drawn
# dotted). Explicit and implicit Euler
# lie on top of each other: their errors are of equal size and opposite sign (one gains
# amplitude by $\sqrt{1 + (\omega h)^2}$ per step, the other loses it by the same factor).
# Symplectic Euler, also of order 1, is about fifteen times more accurate here, since its
# error is mostly a phase error; among the second-order methods BDF2's error constant is the
# largest.
#
# The orders hold on a nonlinear system too: a 5 x 5 cloth (1 m, 40 g per vertex, 50 N/m,
# structural, shear and bending springs, pinned at two corners) falling from horizontal for
# 0.5 s, against RK4 at a step 50 times smaller than the smallest here (its own error is
# $50^4$ times below RK4's smallest error on the plot).

# %%
mesh = msim.mesh.cloth_grid(5, 5)


def small_cloth():
    return msim.System(mesh.vertices, mesh.edges, mass=0.04, stiffness=50.0, fixed=[0, 4])


dts = 0.5 / np.array([200, 400, 800, 1600])
reference = reference_positions(small_cloth, 0.5, 0.5 / 80000)
print(f"omega_max h from {omega_max(small_cloth()) * dts.min():.2f} to "
      f"{omega_max(small_cloth()) * dts.max():.2f} (Gershgorin bound)")
errors = {m: global_error(small_cloth, m, dts, 0.5, reference, **o) for m, o in METHODS.items()}
fig = msim.plot.order_of_accuracy(dts, errors)
fig.axes[0].set_title("5 x 5 cloth falling from horizontal: error at T = 0.5 s");

# %% [markdown]
# A slope is an order only where the error already falls as $C h^p$. On the oscillator at
# steps 32 times larger than above, from $\omega h = 1$ down to 0.125, the leading term does
# not yet dominate: RK4's fitted slope is 3.65, and BDF2's comes out at 2.00 only by chance,
# its local slopes running from 0.6 to 2.7 (at $T$ = 1 s its phase and amplitude errors
# nearly cancel at one of these steps). `order` flags both and names the steps out of range
# (it warns, `OrderWarning`; here the warning is caught and its note printed).

# %%
large = 1.0 / np.array([10, 20, 40, 80])
for method in ("bdf2", "rk4"):
    e = global_error(oscillator, method, large, 1.0, exact, **METHODS[method])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OrderWarning)
        fitted = order(large, e)
    print(f"{method}: slope {fitted:.2f}, local slopes {np.round(fitted.local, 2)}, "
          f"asymptotic: {fitted.asymptotic}\n  {fitted.note}")

# %% [markdown]
# ## Energy over a long run
#
# A rope of 20 vertices (1 m, 100 g, 500 N/m) pinned at one end and released horizontally
# swings for 10 s with no damping: its total energy should stay what it was. The left plot runs
# every method at one step, $h = 0.5 / \omega_{max}$ (0.79 ms), where all but explicit Euler
# are stable; the right one runs the implicit methods at the 1/30 s they are used at.
#
# On one linear mode of frequency omega, a step multiplies the amplitude by $|R(i \omega h)|$:
# exactly 1 for symplectic Euler and velocity Verlet below $\omega h = 2$ (they conserve a
# nearby "shadow" energy) and for implicit midpoint at every h; $1 - (\omega h)^6 / 144$ for
# RK4 (a slow decay); $1 / \sqrt{1 + (\omega h)^2}$ for implicit Euler; and for BDF2 a loss
# of order $(\omega h)^4$, less than implicit Euler's $(\omega h)^2$ at small $\omega h$;
# explicit Euler grows by $\sqrt{1 + (\omega h)^2}$. The stiff modes of a swinging rope are
# excited each time it whips, and those are where the methods differ.

# %%
rope = msim.mesh.rope(20, 1.0, direction=(1.0, 0.0, 0.0))


def swinging_rope():
    return msim.System(rope.vertices, rope.edges, mass=0.005, stiffness=500.0, fixed=[0])


def swing(method, h, options):
    return swinging_rope().simulate(round(10 / h), h, method, record_every=round(0.02 / h),
                                    on_divergence="stop", **options)


h = 0.5 / omega_max(swinging_rope())
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5), layout="constrained", sharey=True)
msim.plot.energy([swing(m, h, o) for m, o in METHODS.items()], relative=True, ax=left)
implicit = ["implicit_euler", "bdf2", "implicit_midpoint"]
msim.plot.energy([swing(m, 1 / 30, NEWTON) for m in implicit], relative=True, ax=right)
colour = {line.get_label().split()[0]: line.get_color() for line in left.get_lines()}
for line in right.get_lines():  # each method in its colour on the left
    line.set_color(colour[line.get_label().split()[0]])
for ax, title in [(left, f"every method at h = {1e3 * h:.2f} ms"),
                  (right, "implicit methods at h = 1/30 s")]:
    ax.set_title(title)
    ax.set_ylim(-0.5, 0.2)
    ax.legend(fontsize="x-small", loc="lower left")
left.set_ylabel("total energy change E(t) - E(0) [J]")
right.set_ylabel("");

# %% [markdown]
# What to see (the rope has about 0.5 J of gravity energy to swing with):
#
# * **Explicit Euler** diverges within 0.3 s (its line leaves at the top).
# * **Symplectic Euler, velocity Verlet and implicit midpoint** keep the energy in a narrow
#   band for the whole 10 s: no drift, only a wobble as the rope's shape changes.
# * **RK4** loses energy slowly: its damping of a mode is $(\omega h)^6 / 144$ per step, tiny
#   for the swing and noticeable only on the stiff modes, which it removes over seconds.
# * **Implicit Euler and BDF2** lose energy each time the rope whips (the steps down, from
#   0.5 s on), implicit Euler more than BDF2, and keep losing it. Implicit midpoint's line is
#   under velocity Verlet's.
# * At **1/30 s** implicit Euler loses almost all of the swing within a few seconds and BDF2
#   more than half of it. **Implicit midpoint** gains energy without bound: it damps nothing,
#   and on stiff springs that rotate, at $\omega_{max} h \approx 21$ here, the midpoint rule
#   loses the unconditional stability it has on linear problems (Simo, Tarnow and Wong 1992).
#   Its line leaves the plot at the top, which is why `Scene.dt_for("implicit_midpoint")`
#   picks $h \le 2 / \omega_{max}$.

# %% [markdown]
# ## The solvers of one implicit step
#
# An implicit Euler step is the minimiser $x^*$ of
# $g(x) = \frac{1}{2h^2}|x - y|_M^2 + E(x)$, and `solver=` picks how it is found: Newton
# (a 3n x 3n sparse Cholesky factorisation per iteration), FMS (Liu et al. 2013: local
# projections and one prefactored n x n solve per iteration) with Chebyshev (Wang 2015) or
# Anderson (Peng et al. 2018) acceleration, L-BFGS with FMS's matrix as its initial Hessian
# (Liu et al. 2017), and Vertex Block Descent (Chen et al. 2024) with or without Chebyshev
# acceleration. The measure is the relative error in g of Liu et al. 2013,
# $(g(x_k) - g^*) / (g(x_0) - g^*)$ (`msim.accuracy.relative_error`), the share of the
# start's error left after $k$ iterations (every solver starts from the same $x_0 = y$), with
# $g^*$ from Newton with line search to $|\nabla g| < 10^{-9}$ N.
#
# The scene: a 30 x 30 cloth (1 kg, 1000 N/m, pinned at two corners) ten exact steps into its
# fall. The time of a point is honest in this sense: each point is a whole step run with its
# iteration cap at that count (tol = 0) and timed in C (`StepInfo.seconds`, the best of five
# runs), so it holds everything the step does, Newton's factorisations and the solvers' per
# step set-up included. What a System sets up once and reuses while h and the model stay the
# same (CHOLMOD's analysis, FMS's factorisation) is left out, as in a simulation, by one
# untimed step before the timed ones. The machine is shared, so the times are noisy by tens
# of percent.

# %%
cloth = msim.mesh.cloth_grid(30, 30)
sim = msim.System(cloth.vertices, cloth.edges, mass=1 / 900, stiffness=1000.0, fixed=[0, 29])
for _ in range(10):
    exact_step(sim, 1 / 30, 1e-8)
g_star = exact_objective(sim, 1 / 30)
SOLVERS = {
    "Newton": ({"solver": "newton", "line_search": True}, [1, 2, 3, 4, 5, 6, 8, 10]),
    "FMS": ({"solver": "fms"}, 2 ** np.arange(10)),
    "FMS + Chebyshev": ({"solver": "fms", "acceleration": "chebyshev"}, 2 ** np.arange(10)),
    "FMS + Anderson": ({"solver": "fms", "acceleration": "anderson"}, 2 ** np.arange(10)),
    "L-BFGS": ({"solver": "lbfgs"}, 2 ** np.arange(10)),
    "VBD": ({"solver": "vbd"}, 2 ** np.arange(10)),
    "VBD + Chebyshev": ({"solver": "vbd", "acceleration": "chebyshev", "rho": 0.95},
                        2 ** np.arange(10)),
}
start = time.perf_counter()
costs = {}
for label, (options, caps) in SOLVERS.items():
    costs[label] = solver_costs(sim, 1 / 30, options, caps, g_star, repeats=5)
print(f"g* = {g_star:.9f} J; measured in {time.perf_counter() - start:.0f} s")

fig, ax = plt.subplots(figsize=(9.5, 4.5), layout="constrained")
for label, (seconds, errors) in costs.items():
    ax.loglog(1e3 * seconds, errors, "o-", ms=3, label=label)
ax.set_xlabel("wall time of the step [ms] (each point: one step run to an iteration cap)")
ax.set_ylabel("relative error in g, (g - g*) / (g_0 - g*)")
ax.set_title("one implicit Euler step (h = 1/30 s) of a 30 x 30 cloth")
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
ax.grid(True, which="both", alpha=0.3)
plt.show()

# %% [markdown]
# What to see: Newton's first iteration costs as much as 20 to 50 FMS iterations, but from
# there it gains orders of magnitude per iteration until the clamped Hessian (compressed
# springs get no transverse stiffness) slows it to a linear rate near 1e-7. Plain FMS gains
# quickly at first and then slowly (linear convergence, Liu et al. 2013, Fig. 2); Chebyshev
# and Anderson acceleration reach in a few milliseconds what plain FMS needs ten times
# longer or more for. L-BFGS, whose initial Hessian is FMS's matrix, costs about as much
# per iteration as FMS and converges like the accelerated FMS or faster. VBD (Chebyshev with
# rho = 0.95, the range its option doc gives for msim's cloths) moves one vertex at a time by
# its own 3 x 3 Newton step, the others held: a sweep costs a few FMS iterations here, and
# on a cloth this stiff (h^2 k / m = 1000) a sweep carries a correction only to the
# neighbours, so after hundreds of sweeps it is still far from x*.
