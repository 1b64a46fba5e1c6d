"""Matplotlib plots of msim runs. Each function returns the Figure and accepts an `ax`."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .system import Trajectory


def _axes(ax, projection: str | None = None):
    """(figure, axes): the given axes' figure, or a new figure with one axes."""
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax.figure, ax
    fig = plt.figure(figsize=(6.4, 4.8), layout="constrained")
    return fig, fig.add_subplot(projection=projection)


def energy(runs: Trajectory | Iterable[Trajectory], *, terms: Iterable[str] = ("total",),
           relative: bool = False, ax=None):
    """Energy [J] against time [s] for one or several trajectories, one line per run and term.

    terms: any of kinetic, spring, gravity, total. relative=True plots E(t) - E(0). Each line
    is labelled with the run's method, step and the options it was given.
    """
    runs = [runs] if isinstance(runs, Trajectory) else list(runs)
    terms = tuple(terms)  # read once: a generator would be used up by the first run
    fig, ax = _axes(ax)
    for run in runs:
        for term in terms:
            e = run.energies[term]
            label = f"{run.method} h={run.dt:.3g}"
            if run.options:
                label += " (" + ", ".join(f"{k}={v}" for k, v in run.options.items()) + ")"
            if len(terms) > 1:
                label += f" {term}"
            if run.diverged is not None:
                label += f" (diverged at step {run.diverged})"
            ax.plot(run.times, e - e[0] if relative else e, label=label)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("energy change [J]" if relative else "energy [J]")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def frame(positions: np.ndarray, faces: np.ndarray | None = None,
          edges: np.ndarray | None = None, *, strain: np.ndarray | None = None,
          strain_limit: float | None = None, fixed: Iterable[int] = (), up: int = 1,
          title: str | None = None, ax=None):
    """Render one frame: shaded triangles `faces` (f,3) and/or springs `edges` (m,2).

    positions (n,3) [m]; strain (m,) colours the springs (e.g. (l - r)/r) with a colour bar
    from -strain_limit to +strain_limit (default: the largest |strain|; give one limit to
    several frames so that their colours compare);
    `up` names the vertical axis (1 for y-up); fixed vertices are marked in red.
    """
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    fig, ax = _axes(ax, "3d")
    order = [0, 2, 1] if up == 1 else [0, 1, 2]  # matplotlib draws z up
    p = positions[:, order]
    if faces is not None and len(faces):
        tri = p[faces]
        normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-300)
        shade = 0.35 + 0.65 * np.abs(normal @ np.array([0.3, -0.5, 0.8]) / np.sqrt(0.98))
        colors = np.clip(shade[:, None] * np.array([0.35, 0.55, 0.85]), 0, 1)
        ax.add_collection3d(Poly3DCollection(tri, facecolors=colors, edgecolors="none"))
    if edges is not None and strain is not None:
        lines = Line3DCollection(p[edges], cmap="coolwarm", linewidths=1.0)
        lines.set_array(np.asarray(strain, dtype=float))
        limit = (strain_limit if strain_limit is not None
                 else max(float(np.max(np.abs(strain), initial=0.0)), 1e-12))
        lines.set_clim(-limit, limit)
        ax.add_collection3d(lines)
        fig.colorbar(lines, ax=ax, shrink=0.6, pad=0.12, label="strain (l - r) / r")
    elif edges is not None:
        ax.add_collection3d(Line3DCollection(p[edges], colors="tab:blue", linewidths=0.6))
    fixed = list(fixed)
    if fixed:
        ax.scatter(*p[fixed].T, color="tab:red", s=20, depthshade=False)
    lo, hi = p.min(0), p.max(0)
    centre, half = (lo + hi) / 2, max(float((hi - lo).max()) / 2, 1e-9)
    for axis, c in zip("xyz", centre):
        getattr(ax, f"set_{axis}lim")(c - half, c + half)
    labels = ["x", "z", "y"] if up == 1 else ["x", "y", "z"]
    ax.set_xlabel(f"{labels[0]} [m]")
    ax.set_ylabel(f"{labels[1]} [m]")
    ax.set_zlabel(f"{labels[2]} [m]")
    if title:
        ax.set_title(title)
    return fig


def convergence(histories: dict[str, np.ndarray], *, ylabel: str = "relative error",
                ax=None):
    """Log-scale curves of per-iteration values, one per label: {label: (k,) array}.

    Iteration 0 is the first entry (the start point for msim's StepInfo histories).
    """
    fig, ax = _axes(ax)
    for label, values in histories.items():
        values = np.asarray(values, dtype=float)
        ax.semilogy(np.arange(len(values)), np.where(values > 0, values, np.nan), label=label)
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    return fig


STATUS_COLOURS = {"stable": "#4caf50", "drift": "#ffb300", "diverged": "#e53935"}


def stability_map(rows, *, ax=None):
    """A method x dt grid coloured stable / drift / diverged, from `msim.stability` rows.

    Methods run top to bottom in the order of the rows; a cell shows the relative energy
    drift or the step at which the run diverged.
    """
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    dts = sorted({r["dt"] for r in rows})
    fig, ax = _axes(ax)
    for r in rows:
        i, j = methods.index(r["method"]), dts.index(r["dt"])
        ax.add_patch(_rectangle(j, i, STATUS_COLOURS[r["status"]]))
        text = (f"step {int(r['diverged'])}" if r["status"] == "diverged"
                else f"{r['relative_drift']:+.1e}")
        ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize="x-small")
    ax.set_xlim(0, len(dts))
    ax.set_ylim(len(methods), 0)
    ax.set_xticks(np.arange(len(dts)) + 0.5, [f"{dt:.3g}" for dt in dts])
    ax.set_yticks(np.arange(len(methods)) + 0.5, methods)
    ax.set_xlabel("dt [s]")
    ax.set_title("stability: green stable, amber energy drift, red diverged")
    return fig


def _rectangle(x: float, y: float, colour: str):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), 1, 1, facecolor=colour, edgecolor="white")


def animate(traj: Trajectory, faces: np.ndarray | None = None,
            edges: np.ndarray | None = None, *, path=None, fps: int = 20, up: int = 1):
    """Animate a trajectory's frames; saved as GIF with Pillow when `path` is given.

    Returns the matplotlib FuncAnimation (in a notebook, display it with
    IPython.display.HTML(anim.to_jshtml())).
    """
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation, PillowWriter

    fig = plt.figure(figsize=(5, 4))
    ax = fig.add_subplot(projection="3d")

    def draw(k: int):
        ax.clear()
        frame(traj.positions[k], faces, edges, up=up, ax=ax,
              title=f"{traj.method}  t = {traj.times[k]:.2f} s")
        return ax.collections

    anim = FuncAnimation(fig, draw, frames=len(traj.positions), interval=1000 / fps)
    if path is not None:
        anim.save(path, writer=PillowWriter(fps=fps))
    return anim
