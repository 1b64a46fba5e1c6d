"""Matplotlib plots of msim runs. Each function returns the Figure and accepts an `ax`."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Sequence

import numpy as np

from ._geometry import _rows4, _Scene
from .system import System, Trajectory


def _axes(ax, projection: str | None = None, width: float = 6.4):
    """(figure, axes): the given axes' figure, or a new figure `width` inches wide with one
    axes."""
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax.figure, ax
    fig = plt.figure(figsize=(width, 4.8), layout="constrained")
    return fig, fig.add_subplot(projection=projection)


# curve plots leave room on the right for their legend, which never covers a curve there
LEGEND_WIDTH = 9.6


def _legend(ax) -> None:
    """The legend of ax beside the axes, top right, where no curve can be under it."""
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))


def energy(runs: Trajectory | Iterable[Trajectory], *, terms: Iterable[str] = ("total",),
           relative: bool = False, ax=None):
    """Energy [J] against time [s] for one or several trajectories, one line per run and term.

    terms: any of kinetic, spring, gravity, total. relative=True plots E(t) - E(0). Each line
    is labelled with the run's method, step and the options it was given.
    """
    runs = _trajectories(runs)
    terms = tuple(terms)  # read once: a generator would be used up by the first run
    for term in terms:
        if term not in runs[0].energies:
            raise ValueError(f"terms: expected names among {sorted(runs[0].energies)}, got "
                             f"{term!r}")
    fig, ax = _axes(ax, width=LEGEND_WIDTH)
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
    _legend(ax)
    ax.grid(True, alpha=0.3)
    return fig


def _trajectories(runs) -> list[Trajectory]:
    """runs as a non-empty list of Trajectory, or a TypeError saying what came instead."""
    items = [runs] if isinstance(runs, Trajectory) else runs
    items = list(items) if isinstance(items, Iterable) else []
    if not items or not all(isinstance(r, Trajectory) for r in items):
        raise TypeError(
            f"runs: expected a Trajectory or a list of them, got {type(runs).__name__}; "
            "msim.compare(..., return_trajectories=True) returns (table, trajectories): plot "
            "the trajectories")
    return items


def frame(positions: np.ndarray, faces: np.ndarray | None = None,
          edges: np.ndarray | None = None, *, system: System | None = None,
          fixed: Iterable[int] | None = None, spheres: np.ndarray | None = None,
          planes: np.ndarray | None = None, strain: np.ndarray | None = None,
          strain_limit: float | None = None, limits: np.ndarray | None = None, up: int = 1,
          title: str | None = None, ax=None):
    """Render one frame: shaded triangles `faces` (f,3) and/or springs `edges` (m,2) as lines.

    positions (n,3) [m]. A rope has no faces: draw it with edges=mesh.edges. strain (m,)
    colours the springs (e.g. (l - r)/r) with a colour bar from -strain_limit to +strain_limit
    (default: the largest |strain|; give one limit to several frames so that their colours
    compare). Fixed vertices (indices) are marked in red; spheres (k,4) rows of centre and
    radius [m] and planes (k,4) rows of normal and offset are drawn with the cloth (a plane as
    a square patch under the data). system: a System whose fixed vertices, colliders and (when
    no faces are given) springs are drawn unless given explicitly.

    The axes are drawn to scale: the box's sides are proportional to the data spans, so 1 m
    is as long on every axis. limits (3,2) [m]: world (x, y, z) lower and upper bounds of the
    view (default: the data and colliders); animate passes one for the whole run. `up` names
    the vertical world axis (1 for y-up), drawn upwards.
    """
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    x = _positions(positions)
    scene = _Scene.of(system, x, faces, edges, fixed, spheres, planes)
    if strain is not None:
        if scene.edges is None:
            raise ValueError("strain: colours springs, so edges (m,2) are needed with it")
        strain = np.asarray(strain, dtype=float)
        if strain.shape != (len(scene.edges),):
            raise ValueError(f"strain: expected shape ({len(scene.edges)},), one value per "
                             f"edge, got {strain.shape}")
    order = _drawing_order(up)
    box = scene.limits() if limits is None else _limits_array(limits)
    fig, ax = _axes(ax, "3d")
    ax.computed_zorder = False  # surfaces sort by depth among themselves; lines, marks on top
    polygons, colours = scene.surfaces(box)
    if len(polygons):
        ax.add_collection3d(Poly3DCollection(polygons[..., order], facecolors=colours,
                                             edgecolors="none", zorder=1))
    if scene.edges is not None:
        _draw_springs(fig, ax, x[:, order][scene.edges], strain, strain_limit)
    if len(scene.fixed):
        ax.scatter(*x[scene.fixed][:, order].T, color="tab:red", s=20, depthshade=False,
                   zorder=3)
    _set_view(ax, box[order], order)
    if title:
        ax.set_title(title)
    return fig


def _draw_springs(fig, ax, segments: np.ndarray, strain, strain_limit) -> None:
    """Springs as lines (m,2,3), coloured by strain with a colour bar when it is given."""
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    if strain is None:
        ax.add_collection3d(Line3DCollection(segments, colors="tab:blue", linewidths=0.8,
                                             zorder=2))
        return
    lines = Line3DCollection(segments, cmap="coolwarm", linewidths=1.0, zorder=2)
    lines.set_array(strain)
    limit = (strain_limit if strain_limit is not None
             else max(float(np.max(np.abs(strain), initial=0.0)), 1e-12))
    lines.set_clim(-limit, limit)
    ax.add_collection3d(lines)
    fig.colorbar(lines, ax=ax, shrink=0.6, pad=0.12, label="strain (l - r) / r")


def _positions(positions) -> np.ndarray:
    """positions as an (n,3) float array, or a TypeError/ValueError saying what came."""
    if isinstance(positions, Trajectory):
        raise TypeError("positions: expected an (n, 3) array of vertex positions [m], got a "
                        "Trajectory; draw one frame of it (traj.positions[-1]) or animate it "
                        "(msim.plot.animate(traj, faces))")
    try:
        x = np.asarray(positions, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"positions: expected an (n, 3) array of vertex positions [m], got "
                        f"{type(positions).__name__}") from err
    if x.ndim != 2 or x.shape[1] != 3 or not len(x):
        hint = "; pick one frame, e.g. traj.positions[-1]" if x.ndim == 3 else ""
        raise ValueError(f"positions: expected an (n, 3) array of vertex positions [m], got "
                         f"shape {x.shape}{hint}")
    return x


def _limits_array(limits) -> np.ndarray:
    box = np.asarray(limits, dtype=float)
    if box.shape != (3, 2) or not np.all(box[:, 1] > box[:, 0]):
        raise ValueError(f"limits: expected (3, 2) rows of lower < upper bound [m], got "
                         f"{limits!r}")
    return box


def _drawing_order(up: int) -> list[int]:
    """World axes drawn on matplotlib's x, y, z: a cyclic order (so right-handed) with `up`
    last, since matplotlib draws z upwards."""
    if up not in (0, 1, 2):
        raise ValueError(f"up: expected 0, 1 or 2 (the index of the vertical axis), got {up!r}")
    return [(up + 1) % 3, (up + 2) % 3, up]


def _set_view(ax, box: np.ndarray, order: list[int]) -> None:
    """Limits from the (3,2) box (drawing order) and a box aspect equal to its spans; ticks
    as dense on every axis (a short axis gets fewer, so that their labels do not overlap)."""
    from matplotlib.ticker import MaxNLocator

    spans = box[:, 1] - box[:, 0]
    for axis, (lo, hi), world, span in zip("xyz", box, order, spans):
        getattr(ax, f"set_{axis}lim")(lo, hi)
        getattr(ax, f"set_{axis}label")(f"{'xyz'[world]} [m]")
        bins = max(1, int(round(6 * span / spans.max())))
        getattr(ax, f"{axis}axis").set_major_locator(MaxNLocator(bins))
    ax.set_box_aspect(spans, zoom=0.85)  # room for the tick and axis labels


def convergence(histories: dict[str, np.ndarray], *, ylabel: str = "relative error",
                ax=None):
    """Log-scale curves of per-iteration values, one per label: {label: (k,) array}.

    Iteration 0 is the first entry (the start point for msim's StepInfo histories).
    """
    fig, ax = _axes(ax, width=LEGEND_WIDTH)
    for label, values in histories.items():
        values = np.asarray(values, dtype=float)
        ax.semilogy(np.arange(len(values)), np.where(values > 0, values, np.nan), label=label)
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    _legend(ax)
    ax.grid(True, which="both", alpha=0.3)
    return fig


def order_of_accuracy(dts: Sequence[float], errors: dict[str, Sequence[float]], *,
                      slopes: Iterable[int] = (1, 2, 4), ylabel: str = "global error [m]",
                      ax=None):
    """Log-log global error against the step dt [s], one line per label: {label: errors}.

    For each p in slopes a dashed line C dt^p is drawn below the methods whose fitted order
    (msim.accuracy.order) rounds to p, through 1/3 of their smallest error at the largest
    step, and labelled "slope p" at its small-step end.
    """
    from .accuracy import order

    dts = np.asarray(dts, dtype=float)
    fig, ax = _axes(ax, width=LEGEND_WIDTH)
    fitted = {}
    for label, e in errors.items():
        e = np.asarray(e, dtype=float)
        fitted[label] = order(dts, e)
        ax.loglog(dts, e, "o-", label=f"{label} (fitted order {fitted[label]:.2f})")
    big = np.argmax(dts)
    for p in slopes:
        below = [np.asarray(errors[k], float)[big] for k, q in fitted.items() if round(q) == p]
        if below:
            line = min(below) / 3 * (dts / dts[big]) ** p
            ax.loglog(dts, line, "--", color="0.4", linewidth=1)
            ax.annotate(f"slope {p}", (dts.min(), line[np.argmin(dts)]), fontsize="small",
                        color="0.3", xytext=(-4, 0), textcoords="offset points", ha="right",
                        va="center")
    ax.set_xlabel("time step h [s]")
    ax.set_ylabel(ylabel)
    _legend(ax)
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
            edges: np.ndarray | None = None, *, system: System | None = None,
            fixed: Iterable[int] | None = None, spheres: np.ndarray | None = None,
            planes: np.ndarray | None = None, path=None, fps: int = 20, up: int = 1):
    """Animate a trajectory's frames; saved as GIF with Pillow when `path` is given.

    One camera for the whole run: the limits hold every frame and the colliders, so a
    falling cloth is seen to fall. faces, edges, system, fixed, planes and up as in `frame`;
    spheres (k,4), or (frames,k,4) for spheres that moved during the run (the Trajectory
    does not record colliders: default the system's current ones). Returns the matplotlib
    FuncAnimation (in a notebook, display it with IPython.display.HTML(anim.to_jshtml())).
    """
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation, PillowWriter

    if not isinstance(traj, Trajectory):
        raise TypeError(f"traj: expected a Trajectory, got {type(traj).__name__}")
    frames = len(traj.positions)
    moving = np.asarray(spheres, dtype=float) if spheres is not None else None
    if moving is not None and moving.ndim == 3 and len(moving) != frames:
        raise ValueError(f"spheres: expected (k, 4) or ({frames}, k, 4) (one set per frame), "
                         f"got shape {moving.shape}")
    per_frame = moving if moving is not None and moving.ndim == 3 else None
    first = per_frame[0] if per_frame is not None else spheres
    scene = _Scene.of(system, _positions(traj.positions[0]), faces, edges, fixed, first, planes)
    every_sphere = per_frame.reshape(-1, 4) if per_frame is not None else scene.spheres
    box = replace(scene, spheres=_rows4("spheres", every_sphere)).limits(
        traj.positions.reshape(-1, 3))
    fig = plt.figure(figsize=(5, 4), layout="constrained")
    ax = fig.add_subplot(projection="3d")

    def draw(k: int):
        ax.clear()
        frame(traj.positions[k], scene.faces, scene.edges, fixed=scene.fixed,
              spheres=per_frame[k] if per_frame is not None else scene.spheres,
              planes=scene.planes, limits=box, up=up, ax=ax,
              title=f"{traj.method}  t = {traj.times[k]:.2f} s")
        return ax.collections

    anim = FuncAnimation(fig, draw, frames=frames, interval=1000 / fps)
    if path is not None:
        anim.save(path, writer=PillowWriter(fps=fps))
    return anim
