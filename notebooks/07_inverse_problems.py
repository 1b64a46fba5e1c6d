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
# # Inverse problems: gradients of a simulation
#
# `System.simulate(..., adjoint=True)` keeps what a backward pass needs, and
# `Trajectory.backward(positions=dL_dX, velocities=dL_dV)` returns the gradient of a loss $L$
# of the recorded frames with respect to every spring's stiffness and rest length, every
# mass, the initial positions and velocities, the external forces and the damping rate: the
# discrete adjoint, the exact derivative of the steps the simulator took (`msim.adjoint`).
# With it, a few lines of SciPy turn a simulator into a solver of inverse problems. Three
# small ones follow, each run to a number:
#
# 1. recover the stiffness of every spring of a swinging rope from its recorded motion;
# 2. find the throw that lands a cloth on a target;
# 3. tune a triangle's three rest lengths until its area reaches a target.
#
# The first differentiates FMS (Liu et al. 2013) run for a fixed 10 local-global iterations
# per step: the gradient of those iterations as they ran, reversed with the same prefactored
# matrix, one solve per iteration, as DiffPD (Du, Wu, Spielberg, Tedrake, Matusik, *DiffPD:
# Differentiable Projective Dynamics*, ACM TOG 2021) does for projective dynamics. The others
# differentiate implicit Euler solved to a tolerance, through the implicit function theorem on
# the step's optimality condition (also as in DiffPD). The third is DiffTaichi's
# `mass_spring_simple` (Hu, Anderson, Li, Sun, Carr, Ragan-Kelley, Durand, *DiffTaichi:
# Differentiable Programming for Physical Simulation*, ICLR 2020).

# %%
# %matplotlib inline
import time

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
from scipy.optimize import minimize

import msim

START = time.perf_counter()


def loss_figure(losses: list[float], xlabel: str, ylabel: str, title: str):
    """Two panels: the loss per evaluation on a log scale on the left; returns the figure and
    the right panel's axes, for the problem's own plot."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.semilogy(losses, "o-" if len(losses) < 40 else "-")
    left.set(xlabel=xlabel, ylabel=ylabel, title=title)
    left.xaxis.set_major_locator(MaxNLocator(integer=True))
    return fig, right

# %% [markdown]
# ## 1. A rope's stiffness from its motion
#
# A rope of 10 vertices and 0.5 m, pinned at one end, starts horizontal and swings down for
# one second. Its nine springs have different stiffnesses (between 40 and 60 N/m, unknown to
# the fit). We record its positions at every step with FMS at 10 iterations per step, the
# "measurement", then start from a uniform wrong guess of 30 N/m and minimise
#
# $$L(k) = \sum_{\text{frames } f} \lVert X_f(k) - X_f^{\text{recorded}} \rVert^2$$
#
# with L-BFGS-B. The unknowns are $\theta = \log(k / 30)$, which keeps every stiffness
# positive and puts them on one scale; $\partial L/\partial\theta = k \, \partial L/\partial k$.

# %%
rope = msim.mesh.rope(10, 0.5, direction=(1.0, 0.0, 0.0))
k_true = 40.0 * (1 + 0.5 * np.sin(np.linspace(0.0, 3.0, len(rope.edges))))
ROPE = {"steps": 100, "dt": 0.01, "method": "fms", "iterations": 10}  # 1 s


def swing(stiffness: np.ndarray, adjoint: bool = False) -> msim.Trajectory:
    """One second of the rope with per-spring `stiffness` [N/m]."""
    sim = msim.System(rope.vertices, rope.edges, mass=0.01, stiffness=stiffness, fixed=[0])
    return sim.simulate(**ROPE, adjoint=adjoint)


recorded = swing(k_true).positions
rope_losses = []


def rope_loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
    """L and dL/dtheta for stiffness 30 exp(theta)."""
    k = 30.0 * np.exp(theta)
    traj = swing(k, adjoint=True)
    r = traj.positions - recorded
    rope_losses.append(float(np.sum(r * r)))
    return rope_losses[-1], traj.backward(positions=2 * r).stiffness * k


fit = minimize(rope_loss, np.zeros(len(rope.edges)), jac=True, method="L-BFGS-B",
               options={"maxiter": 200, "ftol": 1e-15, "gtol": 1e-12})
k_fit = 30.0 * np.exp(fit.x)
rope_error = np.max(np.abs(k_fit - k_true) / k_true)
print(f"{fit.nit} iterations, {fit.nfev} simulations with their gradient; loss "
      f"{rope_losses[0]:.3g} -> {rope_losses[-1]:.3g} m^2")
print(f"largest relative error of the recovered stiffness: {rope_error:.2e}")

# %%
fig, ax2 = loss_figure(rope_losses, "simulation (L-BFGS-B evaluation)", "loss L [m$^2$]",
                       "fitting the rope's stiffness")
springs = np.arange(1, len(rope.edges) + 1)
ax2.plot(springs, k_true, "o-", label="true")
ax2.plot(springs, np.full(len(springs), 30.0), "s:", label="first guess")
ax2.plot(springs, k_fit, "x", markersize=10, label="recovered")
ax2.set(xlabel="spring (from the pin)", ylabel="stiffness [N/m]", title="per-spring stiffness")
ax2.legend()
fig.tight_layout()

# %% [markdown]
# The loss falls by more than ten orders of magnitude and every spring's stiffness comes
# back to within the relative error printed above: the recorded motion determines all nine.
# The gradient is that of the 10 FMS iterations per step that produced the motion, not of an
# exact implicit Euler step that FMS did not reach, so the fit converges to the stiffness that
# produced the recording. Storing the iterates would cost 10 x n x 3 x 8 bytes per step;
# msim recomputes them one step at a time in the backward pass instead, one more forward step
# per step.

# %% [markdown]
# ## 2. Throwing a cloth onto a target
#
# A 5 x 5 cloth (20 cm, 0.25 kg) is thrown from 30 cm above the ground with one initial
# velocity $v_0$ for all its vertices, and should have its centre of mass at a target on the
# ground 2 s later, as in Warp's cloth-throw example. It flies, lands on the ground plane
# (a penalty contact, differentiated through its energy) and slides (no friction: friction has
# no gradient in msim). The loss is the squared distance of the centre of mass from the
# target at the last frame; its gradient with respect to $v_0$ is the sum of
# `Gradient.velocities` over the vertices.

# %%
cloth = msim.mesh.cloth_grid(5, 5, size=0.2, origin=(0.0, 0.3, 0.0))
TARGET = np.array([1.5, 0.0, 0.5])  # [m]
THROW = {"steps": 100, "dt": 0.02, "method": "implicit_euler", "tol": 1e-9, "iterations": 50}


def throw(v0: np.ndarray, adjoint: bool = False) -> msim.Trajectory:
    """Two seconds of the cloth thrown with velocity v0 (3,) [m/s]."""
    sim = msim.System(cloth.vertices, cloth.edges, mass=0.01, stiffness=200.0, damping=0.5,
                      planes=[[0.0, 1.0, 0.0, 0.0]], contact_stiffness=1e4)
    sim.velocities = np.tile(v0, (len(cloth.vertices), 1))
    return sim.simulate(**THROW, adjoint=adjoint)


throw_losses, throws = [], []


def throw_loss(v0: np.ndarray) -> tuple[float, np.ndarray]:
    """L = |centre of mass at 2 s - TARGET|^2 and dL/dv0."""
    traj = throw(v0, adjoint=True)
    com = traj.positions[-1].mean(axis=0)
    throw_losses.append(float(np.sum((com - TARGET) ** 2)))
    throws.append(traj.positions.mean(axis=1))
    adj = np.zeros_like(traj.positions)
    adj[-1] = 2 * (com - TARGET) / len(cloth.vertices)
    return throw_losses[-1], traj.backward(positions=adj).velocities.sum(axis=0)


aim = minimize(throw_loss, np.array([0.0, 2.0, 0.0]), jac=True, method="L-BFGS-B")
landing = throw(aim.x).positions[-1].mean(axis=0)
print(f"throw v0 = {np.round(aim.x, 4)} m/s after {aim.nfev} simulations")
print(f"centre of mass at 2 s: {np.round(landing, 6)} m, "
      f"{np.linalg.norm(landing - TARGET):.2e} m from the target")

# %%
fig, ax2 = loss_figure(throw_losses, "simulation (L-BFGS-B evaluation)", "loss L [m$^2$]",
                       "aiming the throw")
for i, path in enumerate(throws):
    ax2.plot(path[:, 0], path[:, 1], label=f"throw {i}", alpha=0.4 + 0.6 * (i == len(throws) - 1))
ax2.plot(*TARGET[:2], "r*", markersize=14, label="target")
ax2.set(xlabel="x [m]", ylabel="height y [m]", title="centre of mass over 2 s (side view)")
ax2.legend(fontsize=8)
fig.tight_layout()

# %% [markdown]
# Once the cloth lies on the ground and slides without friction, its centre of mass at 2 s
# depends almost linearly on $v_0$, and L-BFGS-B lands it in a few simulations. The distance
# left is the penalty contact's sag: each vertex rests $m g / k_c = 10^{-5}$ m below the
# ground's plane, which the target (on the plane) does not allow for. The upward speed of the
# throw barely matters once the cloth has landed, so the fit keeps the guess's.

# %% [markdown]
# ## 3. A triangle's area (DiffTaichi's mass_spring_simple)
#
# Three masses of 0.1 kg joined by three springs, no gravity, some damping, start at rest
# in their rest shape with area 0.03 m². Changing the rest lengths $r$ makes the triangle move
# towards a new shape; we want its area after one second to be 0.05 m². The loss is
# $L = (A/A^* - 1)^2$ with $A = \tfrac12 |(x_1 - x_0) \times (x_2 - x_0)|$, whose gradient
# with respect to the last frame's positions is written out below; plain gradient descent on
# $r$, as in DiffTaichi's example, with the rest-length gradient from the adjoint.

# %%
corners = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.1, 0.2, 0.0]])
sides = np.array([[0, 1], [1, 2], [2, 0]])
AREA = 0.05  # [m^2]
SETTLE = {"steps": 50, "dt": 0.02, "method": "implicit_euler", "tol": 1e-8, "iterations": 50}


def triangle(rest: np.ndarray, adjoint: bool = False) -> msim.Trajectory:
    """One second of the triangle with rest lengths `rest` (3,) [m]."""
    sim = msim.System(corners, sides, mass=0.1, stiffness=50.0, rest_lengths=rest,
                      gravity=(0.0, 0.0, 0.0), damping=2.0)
    return sim.simulate(**SETTLE, adjoint=adjoint)


def area(x: np.ndarray) -> tuple[float, np.ndarray]:
    """The triangle's area A [m^2] and dA/dx (3, 3): dA/dx_0 = u x (x_2 - x_1) / 2 and
    cyclically, u the unit normal."""
    c = np.cross(x[1] - x[0], x[2] - x[0])
    u = c / np.linalg.norm(c)
    across = np.roll(x, -2, axis=0) - np.roll(x, -1, axis=0)  # x_2 - x_1, x_0 - x_2, x_1 - x_0
    return 0.5 * np.linalg.norm(c), 0.5 * np.cross(u, across)


rest = np.linalg.norm(corners[sides[:, 0]] - corners[sides[:, 1]], axis=1)
area_losses, areas = [], []
for _ in range(25):
    traj = triangle(rest, adjoint=True)
    a, da = area(traj.positions[-1])
    area_losses.append((a / AREA - 1) ** 2)
    areas.append(a)
    adj = np.zeros_like(traj.positions)
    adj[-1] = 2 * (a / AREA - 1) / AREA * da
    rest = rest - 0.02 * traj.backward(positions=adj).rest_lengths
reached = area(triangle(rest).positions[-1])[0]
print(f"rest lengths {np.round(rest, 4)} m; area after 1 s: {reached:.6f} m^2 "
      f"(target {AREA} m^2, relative error {abs(reached / AREA - 1):.1e})")

# %%
fig, ax2 = loss_figure(area_losses, "gradient descent step", "loss $(A/A^* - 1)^2$",
                       "tuning three rest lengths")
ax2.plot(areas, "o-", label="area after 1 s")
ax2.axhline(AREA, color="r", linestyle=":", label="target")
ax2.set(xlabel="gradient descent step", ylabel="area [m$^2$]", title="the area reached")
ax2.legend()
fig.tight_layout()

# %%
print(f"the notebook's computations took {time.perf_counter() - START:.1f} s")
