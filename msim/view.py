"""Interactive 3D views of msim runs in Jupyter: rotate, zoom and scrub through the frames.

    import msim
    traj = sim.simulate(90, dt=1/30, method="fms")
    msim.view(traj, mesh.faces, system=sim)               # orbit with the mouse, drag the slider
    msim.view(traj, mesh.faces, system=sim, color="strain").save_html("run.html")

`msim.view(...)` calls `view` below (this module is callable). It draws with k3d (WebGL in a
Jupyter widget): install it with `pip install "msim[view]"`. Everything the browser needs ships
inside the Python packages, so the widget works offline, and `View.save_html` writes one
standalone file that any browser opens without a network. All frames go to the browser once;
the slider and the play button then only change the time shown, so a 10^4-vertex cloth
animates at the browser's frame rate.
"""

from __future__ import annotations

import math
import numbers
import sys
import types
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from ._geometry import (_bounds, _finite_points, _grid_triangles, _plane_patch, _rows4,
                        _Scene, _sphere_triangles)
from .strain import edge_strain, vertex_strain
from .system import System
from .trajectory import Trajectory

INSTALL_HINT = 'msim.view needs k3d and ipywidgets: pip install "msim[view]"'

# colours (0xRRGGBB) shared with msim.plot: cloth blue, fixed vertices red, colliders
CLOTH, SPRING, FIXED, SPHERE, PLANE = 0x598CD9, 0x1F77B4, 0xD62728, 0xD99959, 0x999999


def view(source: Trajectory | System | np.ndarray, faces: np.ndarray | None = None, *,
         edges: np.ndarray | None = None, system: System | None = None,
         fixed: Any = None, spheres: np.ndarray | None = None,
         planes: np.ndarray | None = None, color: str | np.ndarray | None = None,
         color_range: tuple[float, float] | None = None, up: int | None = None,
         fps: float = 30.0, height: int = 480) -> View:
    """An interactive 3D view of a run (every frame of a Trajectory) or of a System now.

    source: a Trajectory (frames, n, 3) [m], a System (its current positions) or an (n,3)
    array of positions [m]. faces (f,3) triangles drawn shaded; without faces the springs
    (edges (m,2), default the system's) are drawn as lines, as for a rope. system: the
    System the run came from; its fixed vertices (red dots), spheres, planes and springs
    are drawn unless given explicitly. spheres (k,4) rows of centre and radius [m], planes
    (k,4) rows of normal and offset; either (frames, k, 4) for colliders that move. A
    Trajectory brings what it recorded: faces, edges and its colliders (per frame when they
    moved) are drawn unless given explicitly, before the system's.

    color: "strain" colours by (l - r)/r of the springs (per vertex, the mean over its
    springs, on a mesh; per spring on lines); or an array per vertex (n,) / (frames, n) or
    per spring (m,) / (frames, m). color_range (low, high) fixes the colour bar (default
    symmetric about 0 for strain, else the data's range). up: index of the vertical world
    axis (default: against the system's gravity, else y). fps: frames per second of the
    play button. height: pixels.

    Every input is checked before anything is drawn: non-finite positions, times that are
    not finite and increasing or not one per frame, non-finite or empty colliders (a sphere
    of radius <= 0, a plane of zero normal) and non-finite colours raise a ValueError naming
    the argument.

    Returns a View (an ipywidgets box: the 3D plot, and for several frames a play button and
    a frame slider); View.save_html(path) writes a standalone HTML file; View.close() (or a
    `with` block) frees the widgets and the frames they hold.
    """
    k3d, widgets = _libraries()
    frames, times, system, recorded = _frames(source, system)
    if recorded is not None:  # what the run recorded, unless given
        faces = recorded.faces if faces is None else faces
        if faces is None and edges is None:
            edges = recorded.edges
        spheres = recorded.spheres if spheres is None else spheres
        planes = recorded.planes if planes is None else planes
    moving_spheres, spheres = _per_frame("spheres", spheres, len(frames))
    moving_planes, planes = _per_frame("planes", planes, len(frames))
    # colliders that move are drawn per frame below, in place of the system's
    scene = _Scene.of(system, frames[0], faces, edges, fixed,
                      spheres if moving_spheres is None else np.zeros((0, 4)),
                      planes if moving_planes is None else np.zeros((0, 4)))
    if scene.edges is None and system is not None:
        scene.edges = system.edges  # springs to colour, drawn over the faces
    if moving_spheres is None and len(scene.spheres):
        moving_spheres = np.repeat(scene.spheres[None], len(frames), axis=0)
    values, per_spring = _colours(color, frames, scene, system)
    limits = _colour_range(color_range)
    up = _up_axis(system) if up is None else up
    if isinstance(up, (bool, np.bool_)) or up not in (0, 1, 2):
        raise ValueError(f"up: expected 0, 1 or 2 (the index of the vertical axis), got {up!r}")
    if isinstance(height, (bool, np.bool_)) or not isinstance(height, numbers.Integral) \
            or height <= 0:
        raise ValueError(f"height: expected a positive number of pixels, got {height!r}")
    _check_fps(fps)

    every = [scene.spheres] + ([] if moving_spheres is None else [moving_spheres.reshape(-1, 4)])
    flat = [scene.planes] + ([] if moving_planes is None else [moving_planes.reshape(-1, 4)])
    box = replace(scene, spheres=np.concatenate(every), planes=np.concatenate(flat)).limits(
        frames.reshape(-1, 3))
    plot = k3d.plot(height=int(height), grid_visible=False, camera_up_axis="xyz"[up],
                    camera_auto_fit=False, camera=_camera(box, up),
                    axes=["x [m]", "y [m]", "z [m]"], background_color=0xFFFFFF)
    series = partial(_series, [f"{t:.9g}" for t in times - times[0]])
    colouring = {} if values is None else dict(
        color_map=k3d.colormaps.matplotlib_color_maps.coolwarm,
        color_range=list(limits if limits is not None else _range(values, color)))
    if len(scene.faces):
        mesh_colour = {} if values is None or per_spring else dict(attribute=series(values),
                                                                     **colouring)
        # k3d multiplies a colour map's colours by `color`: white keeps them as they are
        plot += k3d.mesh(series(frames), scene.faces.astype(np.uint32),
                         color=0xFFFFFF if mesh_colour else CLOTH, side="double",
                         flat_shading=False, name="cloth", **mesh_colour)
    if scene.edges is not None and len(scene.edges) and (not len(scene.faces) or per_spring):
        plot += _springs(k3d, frames, scene.edges, series, values if per_spring else None,
                         colouring)
    if len(scene.fixed):
        plot += k3d.points(series(frames[:, scene.fixed]), color=FIXED, shader="3d",
                           point_size=0.03 * _size(frames), name="fixed")
    if moving_spheres is not None:
        for i in range(moving_spheres.shape[1]):
            plot += _surface(k3d, np.stack([_sphere_triangles(r) for r in moving_spheres[:, i]]),
                             series, color=SPHERE, name="sphere")
    for p in scene.planes:
        plot += _surface(k3d, _grid_triangles(_plane_patch(p, box)), series, color=PLANE,
                         opacity=0.35, side="double", name="plane")
    if moving_planes is not None:
        for i in range(moving_planes.shape[1]):
            patches = np.stack([_grid_triangles(_plane_patch(p, box)) for p in moving_planes[:, i]])
            plot += _surface(k3d, patches, series, color=PLANE, opacity=0.35, side="double",
                             name="plane")
    return View(plot, times, fps, widgets)


class View:
    """What `view` returns: `plot` (a k3d.Plot), `widget` (the plot with a play button and a
    frame slider, displayed in Jupyter) and `times` (frames,) [s] of the frames.

    The widgets hold every frame and stay registered with ipywidgets (so that a notebook can
    show them again) until `close()`: a loop that makes many views should close each one
    (or use `with msim.view(...) as v:`), else each keeps its frames in memory.
    """

    def __init__(self, plot, times: np.ndarray, fps: float, widgets) -> None:
        _check_fps(fps)
        self.plot, self.times = plot, times
        self.slider = self.play = self.label = None
        if len(times) > 1:
            self.play = widgets.Play(min=0, max=len(times) - 1, interval=round(1000 / fps),
                                     description="play")
            self.slider = widgets.IntSlider(min=0, max=len(times) - 1, description="frame",
                                            readout=False)
            self.label = widgets.Label(self._label(0))
            self._link = widgets.jslink((self.play, "value"), (self.slider, "value"))
            self.slider.observe(self._moved, names="value")
            self._row = widgets.HBox([self.play, self.slider, self.label])
            self.widget = widgets.VBox([plot, self._row])
        else:
            self._link = self._row = None
            self.widget = widgets.VBox([plot])

    def _moved(self, change) -> None:
        self.show(change["new"])

    def show(self, frame: int) -> None:
        """Show frame `frame` (0 .. frames-1) in the plot and on the slider."""
        if not 0 <= frame < len(self.times):
            raise ValueError(f"frame: expected 0 .. {len(self.times) - 1}, got {frame}")
        self.plot.time = float(self.times[frame]) - float(self.times[0])
        if self.slider is not None:
            self.slider.value = frame
            self.label.value = self._label(frame)

    def close(self) -> None:
        """Free the view: close the k3d plot, its objects and the widgets (ipywidgets keeps
        every open widget, and with it the frames, until it is closed). Closing twice is
        harmless; a closed view no longer displays."""
        from ipywidgets import Widget

        if self.slider is not None:
            self.slider.unobserve(self._moved, names="value")
        for widget in [*self.plot.objects, self.plot, self._link, self.play, self.slider,
                       self.label, self._row, self.widget]:
            if widget is None:
                continue
            # each widget's layout and style are widgets too; k3d's Plot.close only clears
            # its outputs, so ipywidgets' own close runs as well
            parts = [getattr(widget, name, None) for name in ("layout", "style")]
            for part in [widget, *parts]:
                if isinstance(part, Widget):
                    part.close()
                    Widget.close(part)

    def __enter__(self) -> View:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _label(self, frame: int) -> str:
        return f"t = {self.times[frame]:.3f} s ({frame + 1}/{len(self.times)})"

    def save_html(self, path) -> None:
        """Write the view as one standalone HTML file (k3d's viewer and the data inline, no
        network needed): rotate and zoom it in any browser, play it from the menu's Time
        panel."""
        self.plot.snapshot_type = "full"
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.plot.get_snapshot())

    def _repr_mimebundle_(self, **kwargs):
        """The widget for Jupyter; where no widget can draw, this object's repr as text."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        names = ", ".join(o.name for o in self.plot.objects)
        frames = f"{len(self.times)} frame" + ("s" if len(self.times) > 1 else "")
        return (f"msim.view of {frames} ({names}): an interactive 3D widget "
                f"in Jupyter; View.save_html(path) writes a standalone page")


def _libraries():
    """(k3d, ipywidgets), or an ImportError that says what to install."""
    try:
        import ipywidgets
        import k3d
    except ImportError as error:
        raise ImportError(f"{INSTALL_HINT} ({error})") from error
    return k3d, ipywidgets


def _series(keys: list[str], arrays: np.ndarray):
    """One float32 array when there is one frame, else k3d's time series {time [s]: array},
    keyed by the time since the first frame (the view starts at time 0)."""
    arrays = np.asarray(arrays, dtype=np.float32)
    return arrays[0] if len(keys) == 1 else dict(zip(keys, arrays))


def _frames(source, system: System | None
            ) -> tuple[np.ndarray, np.ndarray, System | None, Trajectory | None]:
    """(positions (frames, n, 3) [m], times (frames,) [s], system, the Trajectory or None) of
    what view was given, checked: finite positions, finite increasing times, one per frame."""
    if isinstance(source, System):
        return source.positions[None], np.zeros(1), source if system is None else system, None
    if isinstance(source, Trajectory):
        frames = np.asarray(source.positions)
        if frames.ndim != 3 or not len(frames) or frames.dtype.kind not in "iuf":
            raise ValueError(f"source: expected a Trajectory of positions (frames, n, 3) [m], "
                             f"got shape {frames.shape} dtype {frames.dtype}")
        frames = np.stack([_finite_points(f"source.positions[{k}]", x)
                           for k, x in enumerate(frames)])
        return frames, _times(source.times, len(frames)), system, source
    if isinstance(source, (str, bytes)) or np.ndim(source) != 2:
        raise TypeError(f"source: expected a Trajectory, a System or (n, 3) positions [m], "
                        f"got {type(source).__name__} of shape {np.shape(source)}")
    return _finite_points("source", source)[None], np.zeros(1), system, None


def _times(times, frames: int) -> np.ndarray:
    """times (frames,) [s] as floats, each finite and later than the one before: the slider
    shows one frame per time."""
    t = np.asarray(times, dtype=float) if np.asarray(times).dtype.kind in "iuf" else None
    if t is None or t.shape != (frames,):
        raise ValueError(f"source.times: expected ({frames},) times [s], one per frame, got "
                         f"{np.asarray(times).dtype} shape {np.shape(times)}")
    if not np.isfinite(t).all() or np.any(np.diff(t) <= 0):
        bad = (np.flatnonzero(~np.isfinite(t)) if not np.isfinite(t).all()
               else np.flatnonzero(np.diff(t) <= 0) + 1)[0]
        raise ValueError(f"source.times: expected finite times [s], each later than the one "
                         f"before, got {t[bad]!r} at frame {bad}")
    return t


def _per_frame(name: str, rows, frames: int) -> tuple[np.ndarray | None, Any]:
    """(colliders per frame (frames, k, 4) or None, rows for _Scene): a (frames, k, 4)
    array is one set of rows per frame, each row checked like the static ones."""
    if rows is None or np.ndim(rows) != 3:
        return None, rows
    moving = np.asarray(rows, dtype=float)
    if moving.shape[0] != frames or moving.shape[2] != 4:
        raise ValueError(f"{name}: expected (k, 4) rows or ({frames}, k, 4), one set per "
                         f"frame, got shape {moving.shape}")
    for k, r in enumerate(moving):
        _rows4(f"{name}[{k}]", r, name)
    return moving, None


def _colours(color, frames: np.ndarray, scene: _Scene, system: System | None):
    """(values (frames, n or m) or None, whether they are per spring)."""
    if color is None:
        return None, False
    n, m = frames.shape[1], 0 if scene.edges is None else len(scene.edges)
    if isinstance(color, str):
        if color != "strain":
            raise ValueError(f"color: expected 'strain' or an array of values, got {color!r}")
        if system is None:
            raise ValueError('color: "strain" needs system= (its springs and rest lengths)')
        if len(scene.faces):
            return np.stack([vertex_strain(x, system.edges, system.rest_lengths)
                             for x in frames]), False
        return np.stack([edge_strain(x, system.edges, system.rest_lengths)
                         for x in frames]), True
    try:
        values = np.asarray(color, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"color: expected 'strain' or an array of numbers, got "
                        f"{type(color).__name__}") from err
    if not np.isfinite(values).all():
        raise ValueError(f"color: expected finite values, got {values[~np.isfinite(values)][0]}")
    values = np.repeat(values[None], len(frames), axis=0) if values.ndim == 1 else values
    if values.ndim == 2 and values.shape[0] == len(frames):
        if values.shape[1] == n:
            return values, False
        if values.shape[1] == m:
            return values, True
    raise ValueError(f"color: expected values per vertex ({n},) / ({len(frames)}, {n}) or per "
                     f"spring ({m},) / ({len(frames)}, {m}), got shape {np.shape(color)}")


def _range(values: np.ndarray, color) -> tuple[float, float]:
    """Colour bar limits: symmetric about 0 for strain, else the values' range."""
    if isinstance(color, str):
        limit = max(float(np.abs(values).max()), 1e-12)
        return -limit, limit
    low, high = float(values.min()), float(values.max())
    return low, max(high, low + 1e-12)


def _colour_range(color_range) -> tuple[float, float] | None:
    """color_range as (low, high) finite numbers with low < high, or None."""
    if color_range is None:
        return None
    try:
        low, high = (float(v) for v in color_range)
    except (TypeError, ValueError):
        raise ValueError(f"color_range: expected (low, high) numbers, got {color_range!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"color_range: expected finite low < high, got {color_range!r}")
    return low, high


def _check_fps(fps) -> None:
    if isinstance(fps, (bool, np.bool_)) or not isinstance(fps, numbers.Real) \
            or not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps: expected a positive number of frames per second, got {fps!r}")


def _up_axis(system: System | None) -> int:
    """The world axis gravity pulls along (y when there is no system or no gravity)."""
    g = np.zeros(3) if system is None else np.asarray(system.gravity, dtype=float)
    return int(np.argmax(np.abs(g))) if np.any(g) else 1


def _camera(box: np.ndarray, up: int) -> list[float]:
    """k3d's camera (eye, target, up vector) looking at the middle of `box` (3,2) [m] from
    above and in front, far enough to see all of it with k3d's 60 degree field of view."""
    centre, span = box.mean(axis=1), float((box[:, 1] - box[:, 0]).max())
    direction = np.zeros(3)
    direction[[(up + 1) % 3, (up + 2) % 3, up]] = (0.8, 1.2, 0.7)
    eye = centre + 1.4 * span * direction / np.linalg.norm(direction)
    return [*eye, *centre, *np.eye(3)[up]]


def _size(frames: np.ndarray) -> float:
    """The largest span of the run [m] (1 m floor for a single point)."""
    box = _bounds(frames.reshape(-1, 3))
    return float((box[:, 1] - box[:, 0]).max())


def _springs(k3d, frames, edges, series, values, colouring):
    """Springs as line segments; per-spring colours need each segment's own two vertices."""
    ends = frames[:, edges].reshape(len(frames), -1, 3)
    segments = np.arange(2 * len(edges), dtype=np.uint32).reshape(-1, 2)
    colour = {} if values is None else dict(attribute=series(np.repeat(values, 2, axis=1)),
                                            **colouring)
    return k3d.lines(series(ends), segments, indices_type="segment", shader="simple",
                     color=0xFFFFFF if colour else SPRING, name="springs", **colour)


def _surface(k3d, triangles: np.ndarray, series, **style):
    """A shaded mesh of triangles (t,3,3) [m], or (frames, t, 3, 3) for one that moves."""
    points = triangles.reshape(*triangles.shape[:-3], -1, 3)
    indices = np.arange(points.shape[-2], dtype=np.uint32).reshape(-1, 3)
    vertices = series(points) if points.ndim == 3 else points.astype(np.float32)
    return k3d.mesh(vertices, indices, **style)


class _CallableModule(types.ModuleType):
    """`msim.view(...)` is `msim.view.view(...)`: the module is the function users call."""

    def __call__(self, *args, **kwargs) -> View:
        return view(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
