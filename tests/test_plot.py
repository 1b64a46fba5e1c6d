"""Plots run headless and return Figures holding the expected artists."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

import msim
import msim.plot as plot


@pytest.fixture
def run():
    mesh = msim.mesh.cloth_grid(6, 6)
    sim = msim.System(mesh.vertices, mesh.edges, stiffness=100.0, fixed=[0, 5])
    return mesh, sim, sim.simulate(40, 1e-3, "symplectic_euler", record_every=10)


def test_energy_overlays_runs_and_terms(run):
    mesh, sim, traj = run
    fig = plot.energy([traj, traj], terms=("kinetic", "total"))
    lines = fig.axes[0].get_lines()
    assert isinstance(fig, Figure) and len(lines) == 4
    np.testing.assert_array_equal(lines[1].get_ydata(), traj.energies["total"])
    assert lines[0].get_label() == "symplectic_euler h=0.001 kinetic"
    # terms may be any iterable, a generator included: still two lines per run
    fig = plot.energy([traj, traj], terms=(t for t in ("kinetic", "total")))
    assert len(fig.axes[0].get_lines()) == 4
    fms = sim.simulate(2, 0.1, "fms", iterations=3)
    assert plot.energy(fms).axes[0].get_lines()[0].get_label() == "fms h=0.1 (iterations=3)"


def test_energy_tells_runs_by_colour_and_terms_by_line_style(run):
    mesh, sim, traj = run
    other = msim.System(mesh.vertices, mesh.edges, stiffness=100.0, fixed=[0, 5]).simulate(
        4, 1e-2, "implicit_euler")
    terms = ("kinetic", "spring", "total")
    ax = plot.energy([traj, other], terms=terms).axes[0]
    lines = ax.get_lines()
    assert len(lines) == 6  # run by run, each term in turn
    colour = [[matplotlib.colors.to_hex(line.get_color()) for line in lines[3 * r:3 * r + 3]]
              for r in range(2)]
    style = [[line.get_linestyle() for line in lines[3 * r:3 * r + 3]] for r in range(2)]
    assert len(set(colour[0])) == len(set(colour[1])) == 1 and colour[0][0] != colour[1][0]
    assert style[0] == style[1] and len(set(style[0])) == 3
    # the legend: one entry per run in its colour (solid), one per term in its style (grey)
    legend = ax.get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["symplectic_euler h=0.001", "implicit_euler h=0.01", *terms]
    handles = legend.legend_handles
    assert [matplotlib.colors.to_hex(h.get_color()) for h in handles[:2]] == \
        [colour[0][0], colour[1][0]]
    assert [h.get_linestyle() for h in handles[:2]] == ["-", "-"]
    assert [h.get_linestyle() for h in handles[2:]] == style[0]
    assert len({matplotlib.colors.to_hex(h.get_color()) for h in handles[2:]}) == 1
    assert matplotlib.colors.to_hex(handles[2].get_color()) not in colour[0] + colour[1]
    # one term: the runs' own lines are the legend, each in its colour
    ax = plot.energy([traj, other]).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == labels[:2]
    matplotlib.pyplot.close("all")


def test_energy_draws_into_a_given_axes(run):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert plot.energy(run[2], ax=ax, relative=True) is fig
    assert ax.get_lines()[0].get_ydata()[0] == 0.0


def test_frame_draws_faces_springs_strain_and_fixed(run):
    mesh, sim, traj = run
    x = traj.positions[-1]
    length = np.linalg.norm(x[mesh.edges[:, 0]] - x[mesh.edges[:, 1]], axis=1)
    strain = (length - sim.rest_lengths) / sim.rest_lengths
    fig = plot.frame(x, mesh.faces, mesh.edges, strain=strain, fixed=[0, 5])
    ax = fig.axes[0]
    kinds = [type(c).__name__ for c in ax.collections]
    assert "Poly3DCollection" in kinds and "Line3DCollection" in kinds
    assert len(fig.axes) == 2  # the colour bar
    lines = next(c for c in ax.collections if type(c).__name__ == "Line3DCollection")
    np.testing.assert_allclose(lines.get_array(), strain)
    assert lines.get_clim() == (-np.abs(strain).max(), np.abs(strain).max())
    # a given limit fixes the colour scale, so that two frames compare
    fig = plot.frame(x, None, mesh.edges, strain=strain, strain_limit=0.5)
    assert fig.axes[0].collections[0].get_clim() == (-0.5, 0.5)


def test_convergence_is_log_scale():
    fig = plot.convergence({"fms": np.logspace(0, -3, 10), "newton": [1.0, 1e-4, 1e-9]})
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and len(ax.get_lines()) == 2


def test_stability_map_colours_each_cell():
    rows = [{"method": "a", "dt": 0.1, "status": "stable", "relative_drift": 0.0, "diverged": None},
            {"method": "a", "dt": 0.2, "status": "diverged", "relative_drift": np.nan, "diverged": 3},
            {"method": "b", "dt": 0.1, "status": "drift", "relative_drift": 0.5, "diverged": None},
            {"method": "b", "dt": 0.2, "status": "stable", "relative_drift": 0.0, "diverged": None}]
    ax = plot.stability_map(rows).axes[0]
    colours = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    assert colours == [plot.STATUS_COLOURS[r["status"]] for r in rows]
    assert "step 3" in [t.get_text() for t in ax.texts]
    # the first method is the top row
    assert ax.yaxis_inverted() and [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]


def test_animation_writes_an_animated_gif(run, tmp_path):
    mesh, _, traj = run
    path = tmp_path / "cloth.gif"
    plot.animate(traj, mesh.faces, path=path, fps=10)
    with Image.open(path) as gif:
        assert gif.format == "GIF" and gif.n_frames == len(traj.positions) == 5
        assert gif.is_animated


def _spans(ax):
    """Data spans of the three axes [m] and the drawn box's side lengths."""
    spans = np.array([np.ptp(ax.get_xlim()), np.ptp(ax.get_ylim()), np.ptp(ax.get_zlim())])
    return spans, np.asarray(ax.get_box_aspect(), dtype=float)


def test_frame_draws_one_metre_as_one_metre():
    # a 1 m cloth hanging 0.5 m deep: every axis must draw 1 m at the same length
    mesh = msim.mesh.cloth_grid(5, 5)
    x = mesh.vertices.copy()
    x[:, 1] = -0.5 * np.sin(np.pi * x[:, 0]) * np.sin(np.pi * x[:, 2])
    ax = plot.frame(x, mesh.faces).axes[0]
    spans, box = _spans(ax)
    np.testing.assert_allclose(box / box.max(), spans / spans.max(), rtol=1e-9)
    # the limits hold the data, vertical (world y) drawn on matplotlib's z axis
    assert ax.get_zlim()[0] <= -0.5 + 1e-9 and ax.get_zlim()[1] >= 0.0
    # tight to the data, not a cube: 0.5 m deep is drawn shallower than 1 m wide
    assert spans[2] < 0.8 * spans[0] and spans[0] == pytest.approx(spans[1])


def _falling_cloth():
    mesh = msim.mesh.cloth_grid(5, 5)
    sim = msim.System(mesh.vertices, mesh.edges, stiffness=100.0, fixed=[0],
                      planes=[[0.0, 1.0, 0.0, -2.0]], spheres=[[0.5, -1.0, 0.5, 0.3]])
    return mesh, sim, sim.simulate(30, 1 / 60, "fms", record_every=10)


def test_animation_keeps_one_camera_over_the_whole_run(tmp_path):
    mesh, sim, traj = _falling_cloth()
    anim = plot.animate(traj, mesh.faces, system=sim, path=tmp_path / "fall.gif")
    ax = anim._fig.axes[0]
    limits = []
    for k in range(len(traj.positions)):
        anim._func(k)
        limits.append([ax.get_xlim(), ax.get_ylim(), ax.get_zlim()])
        spans, box = _spans(ax)
        np.testing.assert_allclose(box / box.max(), spans / spans.max(), rtol=1e-9)
    limits = np.array(limits)
    assert np.all(limits == limits[0])  # one camera: the cloth moves, the axes do not
    # the camera holds every frame (world y drawn on z): the cloth falls ~0.3 m in 0.5 s
    low = traj.positions[..., 1].min()
    assert low < -0.3 and limits[0, 2, 0] <= low and limits[0, 2, 1] >= 0.0


def test_frame_draws_colliders_and_fixed_vertices_of_a_system():
    mesh, sim, traj = _falling_cloth()
    ax = plot.frame(traj.positions[-1], mesh.faces, system=sim).axes[0]
    # one depth-sorted surface: cloth triangles, then sphere, then plane (matplotlib keeps the
    # 3-D polygons in Poly3DCollection._faces; world (x, y, z) is drawn as (z, x, y))
    triangles = ax.collections[0]._faces
    cloth, rest = triangles[:len(mesh.faces)], triangles[len(mesh.faces):]
    np.testing.assert_array_equal(cloth, traj.positions[-1][mesh.faces][..., [2, 0, 1]])
    centre = np.array([0.5, 0.5, -1.0])  # the sphere at world (0.5, -1, 0.5), radius 0.3
    on_sphere = np.all(np.isclose(np.linalg.norm(rest - centre, axis=2), 0.3), axis=1)
    on_plane = np.all(rest[..., 2] == -2.0, axis=1)  # the ground y = -2
    assert on_sphere.sum() == 2 * 12 * 24 and on_plane.sum() == 2 * 8 * 8
    assert np.all(on_sphere | on_plane)
    assert ax.get_zlim()[0] <= -2.0 and ax.get_zlim()[0] <= -1.3 and ax.get_zlim()[1] >= 0.0
    marks = [c for c in ax.collections if type(c).__name__ == "Path3DCollection"]
    assert len(marks) == 1 and len(marks[0]._offsets3d[0]) == 1  # vertex 0 is fixed


def test_a_rope_draws_as_lines_from_its_edges():
    rope = msim.mesh.rope(6, 1.0, direction=(1.0, 0.0, 0.0))
    fig = plot.frame(rope.vertices, edges=rope.edges, fixed=[0])
    fig.canvas.draw()  # projects the 3-D lines to the 2-D segments drawn
    ax = fig.axes[0]
    lines = [c for c in ax.collections if type(c).__name__ == "Line3DCollection"]
    assert len(lines) == 1 and len(lines[0].get_segments()) == 5
    spans, box = _spans(ax)
    np.testing.assert_allclose(box / box.max(), spans / spans.max(), rtol=1e-9)


def test_plots_name_what_they_expected(run):
    mesh, sim, traj = run
    table, runs = msim.compare(sim, ["symplectic_euler"], steps=5, dt=1e-3,
                               return_trajectories=True)
    with pytest.raises(TypeError, match=r"runs: expected a Trajectory or a list of them.*"
                                        r"return_trajectories=True"):
        plot.energy(table)
    with pytest.raises(TypeError, match=r"positions: expected an \(n, 3\) array.*Trajectory"):
        plot.frame(traj)
    with pytest.raises(ValueError, match=r"faces: expected \(f, 3\) triangles.*\(158, 2\).*"
                                         r"edges="):
        plot.frame(traj.positions[-1], mesh.edges)
    rope = msim.mesh.rope(6)
    with pytest.raises(ValueError, match=r"nothing to draw.*faces.*empty.*edges="):
        plot.frame(rope.vertices, rope.faces)
    with pytest.raises(ValueError, match=r"edges: expected vertex indices below 36, got 40"):
        plot.frame(traj.positions[-1], edges=[[0, 40]])
    with pytest.raises(TypeError, match=r"traj: expected a Trajectory, got list"):
        plot.animate([traj], mesh.faces)


def test_animation_follows_a_moving_sphere_within_one_camera(tmp_path):
    scene = msim.scenes.pushed_cloth(6)
    traj = scene.run(12, "fms", record_every=4)
    # the Trajectory does not record colliders: the scene's script gives the sphere per frame
    spheres = np.array([[[0.0, 0.5, -0.3 + 0.5 * t, 0.15]] for t in traj.times])
    anim = plot.animate(traj, scene.faces, system=scene.system, spheres=spheres,
                        path=tmp_path / "push.gif")
    ax = anim._fig.axes[0]
    n_cloth = len(scene.faces)
    for k, t in enumerate(traj.times):
        anim._func(k)
        sphere = ax.collections[0]._faces[n_cloth:]  # drawn as (z, x, y)
        centre = np.array([-0.3 + 0.5 * t, 0.0, 0.5])
        np.testing.assert_allclose(np.linalg.norm(sphere - centre, axis=2), 0.15, rtol=1e-9)
        # one camera holds the sphere at its first and its last place
        assert ax.get_xlim()[0] <= -0.3 - 0.15 and ax.get_xlim()[1] >= -0.3 + 0.2 + 0.15
    with pytest.raises(ValueError, match=r"spheres: expected \(k, 4\) or \(4, k, 4\)"):
        plot.animate(traj, scene.faces, spheres=spheres[:2])


def test_a_system_without_faces_draws_its_springs():
    scene = msim.scenes.rope_pendulum(5)
    ax = plot.frame(scene.system.positions, system=scene.system).axes[0]
    kinds = [type(c).__name__ for c in ax.collections]
    assert kinds == ["Line3DCollection", "Path3DCollection"]  # the springs, the pinned end


def test_order_of_accuracy_draws_each_method_and_the_slopes_they_have():
    dts = np.array([1e-3, 2e-3, 4e-3])
    errors = {"first": 0.5 * dts, "second": 3.0 * dts**2}
    fig = plot.order_of_accuracy(dts, errors, slopes=(1, 2, 4))
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[:2] == ["first (fitted order 1.00)", "second (fitted order 2.00)"]
    # a reference line for slopes 1 and 2, none for 4 (no method has it), a third of the
    # smallest error at the largest step, falling as dt^p
    assert [t.get_text() for t in ax.texts] == ["slope 1", "slope 2"]
    slope2 = ax.get_lines()[3].get_ydata()
    np.testing.assert_allclose(slope2, 3.0 * 4e-3**2 / 3 * (dts / 4e-3) ** 2)
    assert ax.get_xlabel() == "time step h [s]" and ax.get_ylabel() == "global error [m]"
    matplotlib.pyplot.close(fig)


def test_order_of_accuracy_marks_steps_out_of_the_asymptotic_range():
    # a second-order error whose two largest steps are not in range: C h^2 (1 + (h / 8 ms)^3)
    dts = np.array([0.5e-3, 1e-3, 2e-3, 4e-3, 8e-3])
    errors = {"in range": 3.0 * dts**2, "too large": 3.0 * dts**2 * (1 + (dts / 8e-3) ** 3)}
    with pytest.warns(msim.accuracy.OrderWarning, match=r"steps 0.008, 0.004 s"):
        fig = plot.order_of_accuracy(dts, errors)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert lines[0].get_label() == "in range (fitted order 2.00)"
    assert lines[1].get_label().startswith("too large (slope 2.2")
    assert lines[1].get_label().endswith(", not asymptotic)")
    assert lines[0].get_linestyle() == "-" and lines[1].get_linestyle() == ":"
    # the slope-2 line is drawn for the method in range only: a third of its error at 8 ms
    assert [t.get_text() for t in ax.texts] == ["slope 2"]
    np.testing.assert_allclose(lines[2].get_ydata(), 3.0 * dts**2 / 3)
    matplotlib.pyplot.close(fig)


def _text_corners(text, renderer) -> np.ndarray:
    """(4,2) corners [px] of the rotated rectangle a Text covers."""
    from matplotlib.transforms import Affine2D

    angle = text.get_rotation()
    text.set_rotation(0)
    upright = text.get_window_extent(renderer)
    text.set_rotation(angle)
    centre = text.get_window_extent(renderer).get_points().mean(axis=0)
    w, h = upright.width / 2, upright.height / 2
    corners = np.array([[-w, -h], [w, -h], [w, h], [-w, h]])
    return Affine2D().rotate_deg(angle).transform(corners) + centre


def _apart(corners: np.ndarray, bbox) -> bool:
    """True when a convex quadrilateral and a box do not overlap (a separating axis)."""
    box = np.array([[bbox.x0, bbox.y0], [bbox.x1, bbox.y0], [bbox.x1, bbox.y1],
                    [bbox.x0, bbox.y1]])
    for shape in (corners, box):
        for i in range(4):
            edge = shape[(i + 1) % 4] - shape[i]
            normal = np.array([-edge[1], edge[0]])
            a, b = corners @ normal, box @ normal
            if a.max() < b.min() or b.max() < a.min():
                return True
    return False


def _frame_axes_problems(fig) -> list[str]:
    """What does not read cleanly on a drawn 3D frame: a tick mark within 2 px of its label
    (it runs into the minus sign), tick labels on each other, an axis label on a tick label,
    a label outside the figure."""
    ax, renderer, page = fig.axes[0], fig.canvas.get_renderer(), fig.bbox
    problems = []
    for name in "xyz":
        axis = getattr(ax, f"{name}axis")
        lo, hi = sorted(axis.get_view_interval())
        ticks = [t for t in axis.get_major_ticks() if lo <= t.get_loc() <= hi]
        label = _text_corners(axis.label, renderer)
        boxes = [t.label1.get_window_extent(renderer) for t in ticks]
        problems += [f"{name}: tick labels overlap" for a, b in zip(boxes, boxes[1:])
                     if a.overlaps(b)]
        for tick, box in zip(ticks, boxes):
            text = tick.label1.get_text()
            mark = tick.tick1line.get_window_extent(renderer)
            gap = max(box.x0 - mark.x1, mark.x0 - box.x1, box.y0 - mark.y1, mark.y0 - box.y1)
            if gap < 2:
                problems.append(f"{name}: tick mark {gap:.1f} px from {text}")
            if not _apart(label, box):
                problems.append(f"{name}: axis label on tick label {text}")
            if not (page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0
                    and box.y1 <= page.y1):
                problems.append(f"{name}: tick label {text} outside the figure")
        if not (np.all(label >= page.p0) and np.all(label <= page.p1)):
            problems.append(f"{name}: axis label outside the figure")
    return problems


def _shapes():
    """Frames of the shapes the notebooks draw: (name, positions, frame keywords)."""
    mesh = msim.mesh.cloth_grid(10, 10)
    hanging = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=200.0, fixed=[0, 9])
    hanging.simulate(500, 1e-3, "symplectic_euler")
    yield "hanging", hanging.positions, dict(faces=mesh.faces)
    yield "flat", mesh.vertices, dict(faces=mesh.faces)
    sag = mesh.vertices.copy()
    sag[:, 1] = -0.5 * np.sin(np.pi * sag[:, 0]) * np.sin(np.pi * sag[:, 2])
    yield "sagging", sag, dict(faces=mesh.faces)
    curtain = msim.mesh.cloth_grid(10, 10, plane="xy")
    yield "curtain", curtain.vertices, dict(faces=curtain.faces)
    for scene in (msim.scenes.cloth_on_sphere(10), msim.scenes.jelly_cube(3)):
        yield scene.name, scene.initial.positions, dict(faces=scene.faces, system=scene.initial)


@pytest.mark.parametrize("name,positions,keywords",
                         [pytest.param(*shape, id=shape[0]) for shape in _shapes()])
def test_frame_axes_read_cleanly(name, positions, keywords):
    import warnings

    fig = plot.frame(positions, **keywords, title=name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "Glyph 8722 (MINUS SIGN) missing from font"
        fig.canvas.draw()
    assert _frame_axes_problems(fig) == []
    # negative ticks are labelled with the minus sign (axes.unicode_minus) that the font draws
    for axis in (fig.axes[0].xaxis, fig.axes[0].yaxis, fig.axes[0].zaxis):
        lo, hi = sorted(axis.get_view_interval())
        for tick in axis.get_major_ticks():
            if lo <= tick.get_loc() < 0:
                assert tick.label1.get_text().startswith("\N{MINUS SIGN}")
    matplotlib.pyplot.close(fig)


def test_jshtml_player_loads_nothing_from_the_web(run, tmp_path):
    import re

    mesh, _, traj = run
    anim = plot.animate(traj, mesh.faces)
    player = plot.jshtml(anim)
    page = str(player)
    matplotlib.pyplot.close(anim._fig)
    # no stylesheet, script or image from elsewhere: matplotlib's own player links Font
    # Awesome from a CDN for its button icons
    sources = re.findall(r'<(?:link|script|img)[^>]*?(?:href|src)="([^"]*)"', page)
    assert [s for s in sources if re.match(r"(https?:)?//", s)] == []
    assert "font-awesome" not in page
    # the nine buttons keep their icons, now drawn from inline SVG, and the frames are inline
    for icon in ("play", "pause", "step-forward", "step-backward", "fast-forward",
                 "fast-backward", "minus", "plus"):
        assert f'class="fa fa-{icon}' in page and f".fa-{icon} {{ background-image: url(" \
            "\"data:image/svg+xml," in page, icon
    assert page.count("data:image/png;base64,") == len(traj.positions)
    assert player._repr_html_() == page  # a notebook shows it as the player
    assert repr(player) == f"<msim.plot.Html: {len(page):,} characters>"
