"""Matplotlib plots of msim runs. Each function returns the Figure and accepts an `ax`."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Sequence
from urllib.parse import quote

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


def _legend(ax, handles=None) -> None:
    """The legend of ax (of `handles` when given) beside the axes, top right, where no curve
    can be under it."""
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))


# energy(): one line style per term, the run's colour for every term of a run
TERM_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 3)))
TERM_KEY_COLOUR = "0.35"  # the legend's entries for the terms: their style in a neutral grey


def energy(runs: Trajectory | Iterable[Trajectory], *, terms: Iterable[str] = ("total",),
           relative: bool = False, ax=None):
    """Energy [J] against time [s] for one or several trajectories, one line per run and term.

    Each run has one colour (matplotlib's colour cycle, in the order given) and each term one
    line style (solid, dashed, dotted, dash-dot, ... in the order of `terms`), so the legend
    tells run by colour and term by style: with several terms it lists the runs (their colour,
    solid) and then the terms (their style, in grey); with one term, the runs' lines. Each run
    is labelled with its method, step and the options it was given (its lines' labels add the
    term).

    terms: any of the trajectories' energy names (kinetic, spring, gravity, collision, total).
    relative=True plots E(t) - E(0).
    """
    from matplotlib.lines import Line2D

    runs = _trajectories(runs)
    terms = tuple(terms)  # read once: a generator would be used up by the first run
    for term in terms:
        if term not in runs[0].energies:
            raise ValueError(f"terms: expected names among {sorted(runs[0].energies)}, got "
                             f"{term!r}")
    fig, ax = _axes(ax, width=LEGEND_WIDTH)
    colours = _colour_cycle()
    keys = []
    for k, run in enumerate(runs):
        label = f"{run.method} h={run.dt:.3g}"
        if run.options:
            label += " (" + ", ".join(f"{name}={v}" for name, v in run.options.items()) + ")"
        if run.diverged is not None:
            label += f" (diverged at step {run.diverged})"
        colour = colours[k % len(colours)]
        for j, term in enumerate(terms):
            e = run.energies[term]
            ax.plot(run.times, e - e[0] if relative else e, color=colour,
                    linestyle=TERM_STYLES[j % len(TERM_STYLES)],
                    label=f"{label} {term}" if len(terms) > 1 else label)
        keys.append(Line2D([], [], color=colour, linestyle="-", label=label))
    if len(terms) > 1:
        keys += [Line2D([], [], color=TERM_KEY_COLOUR, linestyle=TERM_STYLES[j % len(TERM_STYLES)],
                        label=term) for j, term in enumerate(terms)]
    else:
        keys = None  # the lines themselves
    ax.set_xlabel("time [s]")
    ax.set_ylabel("energy change [J]" if relative else "energy [J]")
    _legend(ax, keys)
    ax.grid(True, alpha=0.3)
    return fig


def _colour_cycle() -> list:
    """The colours of matplotlib's property cycle (rcParams), tab10 by default."""
    import matplotlib

    return matplotlib.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])


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


# 3D axes. mplot3d places tick labels (pad + 8 points) and axis labels (labelpad + 21 points)
# away from the box in data units scaled by the box's sides, so on a box drawn to scale with a
# thin side (a hanging cloth, a curtain) its default pads put a tick mark through a label's
# minus sign and the axis label on the tick labels. The pads below grow with the largest
# ratio of the box's longest side to another side (up to PAD_GROWTH_MAX); measured clear on
# hanging, flat, sagging and curtain cloths, a cloth on a sphere and a cube on the ground.
TICK_LABEL_PAD = 8.0
AXIS_LABEL_PAD = 12.0
PAD_GROWTH_MAX = 5.0
TICKS_PER_LONGEST_SIDE = 4  # tick intervals on the longest side, fewer on shorter ones
BOX_ZOOM = 0.75  # of the axes: room for the tick and axis labels around the box


def _set_view(ax, box: np.ndarray, order: list[int]) -> None:
    """Limits from the (3,2) box (drawing order) and a box aspect equal to its spans; ticks
    as dense on every axis (a short axis gets fewer, down to one, so that their labels do not
    overlap), their labels clear of the tick marks and of the axis labels."""
    from matplotlib.ticker import MaxNLocator

    spans = box[:, 1] - box[:, 0]
    ratio = spans / spans.max()
    for k, (axis, (lo, hi), world) in enumerate(zip("xyz", box, order)):
        growth = min(PAD_GROWTH_MAX, 1 / np.delete(ratio, k).min())
        getattr(ax, f"set_{axis}lim")(lo, hi)
        getattr(ax, f"set_{axis}label")(f"{'xyz'[world]} [m]",
                                        labelpad=AXIS_LABEL_PAD * growth)
        bins = max(1, int(TICKS_PER_LONGEST_SIDE * ratio[k]))
        getattr(ax, f"{axis}axis").set_major_locator(MaxNLocator(bins, min_n_ticks=1))
        getattr(ax, f"{axis}axis").set_tick_params(pad=TICK_LABEL_PAD * growth)
    ax.set_box_aspect(spans, zoom=BOX_ZOOM)


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
                      scale: float = 1.0, ax=None):
    """Log-log global error against the step dt [s], one line per label: {label: errors}.

    Each method's order is fitted and checked by msim.accuracy.order (scale as there): a method
    whose steps are in the asymptotic range is labelled "fitted order p" and drawn solid; one
    whose steps are not (its local slopes disagree; order warns OrderWarning naming the steps)
    is labelled "slope p, not asymptotic" and drawn dotted. For each p in slopes a dashed line
    C dt^p is drawn below the asymptotic methods whose order rounds to p, through 1/3 of their
    smallest error at the largest step, and labelled "slope p" at its small-step end.
    """
    from .accuracy import order

    dts = np.asarray(dts, dtype=float)
    fig, ax = _axes(ax, width=LEGEND_WIDTH)
    fitted = {}
    for label, e in errors.items():
        e = np.asarray(e, dtype=float)
        fitted[label] = q = order(dts, e, scale=scale)
        text = f"fitted order {q:.2f}" if q.asymptotic else f"slope {q:.2f}, not asymptotic"
        ax.loglog(dts, e, "o-" if q.asymptotic else "o:", label=f"{label} ({text})")
    big = np.argmax(dts)
    for p in slopes:
        below = [np.asarray(errors[k], float)[big] for k, q in fitted.items()
                 if q.asymptotic and round(q) == p]
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
    FuncAnimation; in a notebook, `jshtml(anim)` shows it with play controls that work offline.
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
    fig = plt.figure(figsize=(5, 4.5), layout="constrained")
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


class Html:
    """A page of HTML that Jupyter shows rendered (`_repr_html_`); str(html) is the text, to
    write to a file."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return self.text

    def __repr__(self) -> str:  # the plain-text view of a notebook, not megabytes of frames
        return f"<msim.plot.Html: {len(self.text):,} characters>"


# matplotlib's jshtml player draws its buttons with Font Awesome 4 icons from a CDN, which a
# page read offline (or a documentation site that loads nothing from the web) cannot fetch:
# the same icons as inline SVG paths on a 16 x 16 grid
_ICONS = {
    "play": "M4 2L14 8L4 14Z",
    "pause": "M3 2h4v12H3zM9 2h4v12H9z",
    "step-forward": "M2 2L10 8L2 14ZM11 2h3v12h-3z",
    "step-backward": "M14 2L6 8L14 14ZM2 2h3v12H2z",
    "fast-forward": "M1 2L7 8L1 14ZM7 2L13 8L7 14ZM13 2h2v12h-2z",
    "fast-backward": "M15 2L9 8L15 14ZM9 2L3 8L9 14ZM1 2h2v12H1z",
    "minus": "M2 7h12v2H2z",
    "plus": "M7 2h2v5h5v2H9v5H7V9H2V7h5z",
}
_FONT_AWESOME_LINK = re.compile(r'<link rel="stylesheet"\s+href="https?://[^"]*font-awesome[^"]*">')


def _icon_style() -> str:
    rules = [".anim-buttons .fa { display: inline-block; width: 1em; height: 1em; "
             "vertical-align: middle; background: center / contain no-repeat; }",
             ".anim-buttons .fa-flip-horizontal { transform: scaleX(-1); }"]
    for name, path in _ICONS.items():
        svg = (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'>"
               f"<path d='{path}'/></svg>")
        rules.append(f'.anim-buttons .fa-{name} {{ background-image: '
                     f'url("data:image/svg+xml,{quote(svg)}"); }}')
    return "<style>\n" + "\n".join(rules) + "\n</style>"


def jshtml(anim, **options) -> Html:
    """An animation (`animate`'s FuncAnimation) as one self-contained HTML player: the frames,
    a slider and play, pause, step and speed buttons, with nothing loaded from the web.

    matplotlib's `anim.to_jshtml()` (options go to it, e.g. fps, default_mode="loop") links
    its button icons from a CDN; here they are inline SVG, so the controls show offline, in a
    notebook and on the documentation site. The result is a str that a notebook displays as
    the player (as the last expression of a cell, or with IPython.display.display);
    str(player) is the HTML, to write to a file.
    """
    page = anim.to_jshtml(**options)
    return Html(_FONT_AWESOME_LINK.sub(lambda _: _icon_style(), page, count=1))
