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
    fig = plt.figure(figsize=(6.4, 4.8))
    return fig, fig.add_subplot(projection=projection)


def energy(runs: Trajectory | Iterable[Trajectory], *, terms: Iterable[str] = ("total",),
           relative: bool = False, ax=None):
    """Energy [J] against time [s] for one or several trajectories, one line per run and term.

    terms: any of kinetic, spring, gravity, total. relative=True plots E(t) - E(0).
    """
    runs = [runs] if isinstance(runs, Trajectory) else list(runs)
    fig, ax = _axes(ax)
    for run in runs:
        for term in terms:
            e = run.energies[term]
            label = f"{run.method} h={run.dt:g}" + (f" {term}" if len(tuple(terms)) > 1 else "")
            if run.diverged is not None:
                label += f" (diverged at step {run.diverged})"
            ax.plot(run.times, e - e[0] if relative else e, label=label)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("energy change [J]" if relative else "energy [J]")
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    return fig


def frame(positions: np.ndarray, faces: np.ndarray | None = None,
          edges: np.ndarray | None = None, *, fixed: Iterable[int] = (), up: int = 1,
          title: str | None = None, ax=None):
    """Render one frame: shaded triangles `faces` (f,3) or line springs `edges` (m,2).

    positions (n,3) [m]; `up` names the vertical axis (1 for y-up); fixed vertices are marked.
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
