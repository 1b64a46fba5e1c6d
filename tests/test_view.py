"""msim.view: the interactive 3D viewer (k3d) draws what the run holds, says what to install
without k3d, and its standalone HTML export renders in a real browser (headless Chromium)."""

import re
import subprocess
import sys

import numpy as np
import pytest

import msim
from chromium import Browser, executable


@pytest.fixture(scope="module")
def draped():
    """A 12x12 cloth pinned at one corner dropped on a sphere, 30 frames of implicit Euler."""
    mesh = msim.mesh.cloth_grid(12, 12, size=1.0, origin=(-0.5, 0.6, -0.5))
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.005, fixed=[0],
                      planes=[[0, 1, 0, 0]], spheres=[[0, 0.2, 0, 0.25]], friction=0.3)
    traj = sim.simulate(30, dt=1 / 30, method="implicit_euler")
    return mesh, sim, traj


def test_without_k3d_view_says_what_to_install():
    code = ("import sys; sys.modules['k3d'] = None\n"
            "import msim\n"
            "mesh = msim.mesh.cloth_grid(3, 3)\n"
            "try:\n"
            "    msim.view(mesh.vertices, mesh.faces)\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert 'pip install "msim[view]"' in out


def test_view_holds_every_frame_the_fixed_vertex_and_the_colliders(draped):
    pytest.importorskip("k3d")
    mesh, sim, traj = draped
    view = msim.view(traj, mesh.faces, system=sim)
    objects = {o.name: o for o in view.plot.objects}
    assert set(objects) == {"cloth", "fixed", "sphere", "plane"}
    cloth = objects["cloth"].vertices
    assert len(cloth) == len(traj.times) == 31
    # the times are relative to the first frame, in seconds; the last frame is the last state
    last = max(cloth, key=float)
    assert float(last) == pytest.approx(30 / 30, rel=1e-5)
    np.testing.assert_allclose(cloth[last], traj.positions[-1], atol=1e-6)
    np.testing.assert_allclose(objects["fixed"].positions[last], [mesh.vertices[0]], atol=1e-6)
    # the sphere is drawn at its radius (0.25 m) about its centre
    sphere = objects["sphere"].vertices
    sphere = sphere[min(sphere, key=float)] if isinstance(sphere, dict) else sphere
    radius = np.linalg.norm(sphere - [0, 0.2, 0], axis=1)
    np.testing.assert_allclose(radius, 0.25, rtol=1e-6)
    # the ground plane y = 0 lies at y = 0
    np.testing.assert_allclose(objects["plane"].vertices[:, 1], 0.0, atol=1e-6)
    # the slider scrubs (as dragging it or the play button moves it): frame 15 is t = 0.5 s
    view.slider.value = 15
    assert view.plot.time == pytest.approx(0.5, rel=1e-6)
    assert view.label.value.startswith("t = 0.500 s (16/31)")
    view.show(30)
    assert view.slider.value == 30 and view.plot.time == pytest.approx(1.0, rel=1e-6)


def test_a_moving_sphere_is_drawn_where_it_is_in_each_frame(draped):
    pytest.importorskip("k3d")
    mesh, sim, traj = draped
    centres = np.zeros((31, 3))
    centres[:, 2] = np.linspace(-0.3, 0.3, 31)  # 0.6 m along z over the run
    spheres = np.concatenate([centres, np.full((31, 1), 0.1)], axis=1)[:, None]
    view = msim.view(traj, mesh.faces, system=sim, spheres=spheres)
    drawn = [o for o in view.plot.objects if o.name == "sphere"]
    assert len(drawn) == 1  # the given sphere replaces the system's
    for key, vertices in drawn[0].vertices.items():
        frame = round(float(key) * 30)
        np.testing.assert_allclose(vertices.mean(axis=0)[2], centres[frame, 2], atol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(vertices - centres[frame], axis=1), 0.1,
                                   rtol=1e-5)


def test_strain_colours_a_uniformly_stretched_rope_by_its_stretch():
    pytest.importorskip("k3d")
    rope = msim.mesh.rope(6, length=1.0)
    sim = msim.System(rope.vertices * 1.1, rope.edges, rest_lengths=np.full(5, 0.2))
    view = msim.view(sim, color="strain")  # no faces: springs as lines, coloured per spring
    springs = next(o for o in view.plot.objects if o.name == "springs")
    np.testing.assert_allclose(springs.attribute, 0.1, rtol=1e-6)  # (1.1 * 0.2 - 0.2) / 0.2
    assert list(springs.color_range) == pytest.approx([-0.1, 0.1])


def test_bad_input_names_the_argument(draped):
    pytest.importorskip("k3d")
    mesh, sim, traj = draped
    with pytest.raises(ValueError, match="color: expected values per vertex"):
        msim.view(traj, mesh.faces, system=sim, color=np.zeros(7))
    with pytest.raises(TypeError, match="source: expected a Trajectory"):
        msim.view("cloth.obj", mesh.faces)
    with pytest.raises(ValueError, match="spheres: expected"):
        msim.view(traj, mesh.faces, spheres=np.zeros((2, 1, 4)))
    with pytest.raises(ValueError, match="frame: expected 0 .. 30"):
        msim.view(traj, mesh.faces).show(31)


@pytest.mark.skipif(executable() is None,
                    reason="headless check needs Debian's chromium (apt-get install chromium)")
def test_exported_html_renders_the_cloth_in_headless_chromium(draped, tmp_path):
    pytest.importorskip("k3d")
    from PIL import Image

    mesh, sim, traj = draped
    view = msim.view(traj, mesh.faces, system=sim)
    view.show(30)  # the export opens at the frame shown: the draped cloth
    page = tmp_path / "view.html"
    view.save_html(page)
    shot = tmp_path / "view.png"
    with Browser(900, 640) as browser:
        browser.screenshot(page.as_uri(), shot, ready="window.K3DInstance && "
                           "document.querySelector('#canvasTarget canvas')")
        canvas = browser.evaluate("(() => { const c = document.querySelector("
                                  "'#canvasTarget canvas'); return [c.width, c.height]; })()")
    assert canvas[0] >= 800 and canvas[1] >= 400
    rgb = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    cloth = (b > r + 40) & (b > g + 20)    # the shaded blue cloth
    pinned = (r > 150) & (g < 90) & (b < 90)  # the red mark of the fixed corner
    sphere = (r > g + 30) & (g > b + 20)   # the orange sphere, partly under the cloth
    assert cloth.sum() > 5000, f"{cloth.sum()} cloth pixels: the WebGL canvas drew no cloth"
    assert pinned.sum() > 10 and sphere.sum() > 20


@pytest.mark.skipif(executable() is None,
                    reason="headless check needs Debian's chromium (apt-get install chromium)")
def test_colours_render_as_the_colour_bar_says(tmp_path):
    """A flat cloth coloured -1 on its left half and +1 on its right half, in the range
    (-1, 1): coolwarm's ends, blue (59, 76, 192) and red (180, 4, 38), shaded."""
    pytest.importorskip("k3d")
    from PIL import Image

    mesh = msim.mesh.cloth_grid(10, 10, size=1.0)
    values = np.where(mesh.vertices[:, 0] < 0.5, -1.0, 1.0)
    page, shot = tmp_path / "colours.html", tmp_path / "colours.png"
    msim.view(mesh.vertices, mesh.faces, color=values, color_range=(-1, 1)).save_html(page)
    with Browser(900, 640) as browser:
        browser.screenshot(page.as_uri(), shot, ready="window.K3DInstance && "
                           "document.querySelector('#canvasTarget canvas')")
    rgb = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    red = (r > 100) & (r > 2 * g) & (r > 2 * b)
    blue = (b > 100) & (b > 2 * r)
    assert red.sum() > 3000 and blue.sum() > 3000, (red.sum(), blue.sum())


# ---------------------------------------------------------------- every input checked


def _bad_view_cases(mesh, sim, traj):
    """(what view is given, the error it raises): inputs that made a NaN camera, a slider
    offering frames that are not drawn, or a sphere of NaN vertices."""
    import dataclasses

    nan_frame = traj.positions.copy()
    nan_frame[4, 7, 1] = np.nan
    inf_points = mesh.vertices.copy()
    inf_points[3, 0] = np.inf
    times = traj.times.copy()
    times[5] = times[4]
    return [
        ((dataclasses.replace(traj, positions=nan_frame), mesh.faces), {},
         r"source.positions\[4\]: expected finite numbers, got \[.*nan.*\] in vertex 7"),
        ((inf_points, mesh.faces), {}, r"source: expected finite numbers, got .* in vertex 3"),
        ((dataclasses.replace(traj, times=times), mesh.faces), {},
         r"source.times: expected finite times \[s\], each later than the one before, got "
         r".* at frame 5"),
        ((dataclasses.replace(traj, times=traj.times[:-3]), mesh.faces), {},
         r"source.times: expected \(31,\) times \[s\], one per frame"),
        ((traj, mesh.faces), {"spheres": [[0, np.nan, 0, 0.2]]},
         r"spheres: expected finite numbers, got \[0.0, nan, 0.0, 0.2\] in row 0"),
        ((traj, mesh.faces), {"spheres": [[0, 0, 0, -0.2]]},
         r"spheres: expected rows of centre and radius > 0 \[m\], got radius -0.2 in row 0"),
        ((traj, mesh.faces), {"planes": [[0, 0, 0, 1]]},
         r"planes: expected rows of a non-zero normal and an offset, got a zero normal in row 0"),
        ((traj, mesh.faces), {"spheres": np.full((31, 1, 4), np.nan)},
         r"spheres\[0\]: expected finite numbers"),
        ((traj, mesh.faces), {"color": np.full(len(mesh.vertices), np.nan)},
         r"color: expected finite values, got nan"),
        ((traj, mesh.faces), {"color": "strain", "system": sim, "color_range": (0, np.nan)},
         r"color_range: expected finite low < high"),
        ((traj, mesh.faces), {"fps": np.inf}, r"fps: expected a positive number of frames"),
        ((traj, mesh.faces), {"height": 0}, r"height: expected a positive number of pixels"),
    ]


def test_every_input_is_checked_with_an_error_naming_it(draped):
    pytest.importorskip("k3d")
    from hostile import attempt

    mesh, sim, traj = draped
    for args, kwargs, message in _bad_view_cases(mesh, sim, traj):
        error = attempt(lambda: msim.view(*args, **kwargs), (ValueError, TypeError))
        assert isinstance(error, ValueError), (message, error)
        assert re.search(message, str(error)), (message, str(error))


def test_a_saved_run_draws_its_own_mesh_and_colliders(draped, tmp_path):
    pytest.importorskip("k3d")
    mesh, sim, traj = draped
    traj.faces = mesh.faces
    try:
        traj.save(tmp_path / "run.npz")
    finally:
        traj.faces = None
    loaded = msim.Trajectory.load(tmp_path / "run.npz")
    with msim.view(loaded) as view:  # no faces, no system: the file has them
        names = sorted(o.name for o in view.plot.objects)
        assert names == ["cloth", "plane", "sphere"]
        cloth = next(o for o in view.plot.objects if o.name == "cloth")
        np.testing.assert_array_equal(cloth.indices, mesh.faces)
    # colliders the script moved are drawn where they were in each frame
    pushed = msim.scenes.pushed_cloth(5)
    run = pushed.run(4, "fms", iterations=3)
    with msim.view(run, pushed.faces) as view:
        sphere = next(o for o in view.plot.objects if o.name == "sphere")
        for key, vertices in sphere.vertices.items():
            k = int(np.argmin(np.abs(run.times - run.times[0] - float(key))))
            np.testing.assert_allclose(vertices.mean(axis=0), run.spheres[k, 0, :3], atol=1e-5)


def _retained_per_view(close: bool, views: int, mesh, sim, traj) -> float:
    """Bytes still allocated per view after `views` views were made (and closed) and
    dropped."""
    import gc
    import tracemalloc

    msim.view(traj, mesh.faces, system=sim).close()  # imports and caches, before measuring
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(views):
            view = msim.view(traj, mesh.faces, system=sim)
            if close:
                view.close()
            del view
        gc.collect()
        return (tracemalloc.get_traced_memory()[0] - before) / views
    finally:
        tracemalloc.stop()


def test_closing_a_view_frees_its_widgets_and_frames(draped):
    """ipywidgets keeps every widget until it is closed: an unclosed view of the draped run
    keeps its frames (31 frames of 144 vertices, the sphere's mesh per frame, ...). Measured
    over 50 views: ~0.9 MiB kept per view without close, a few kB with it."""
    pytest.importorskip("k3d")
    mesh, sim, traj = draped
    kept = _retained_per_view(False, 10, mesh, sim, traj)
    freed = _retained_per_view(True, 50, mesh, sim, traj)
    import ipywidgets

    ipywidgets.Widget.close_all()  # the unclosed ones, so that they leak no further
    assert kept > 0.3 * 2**20, f"{kept / 2**20:.2f} MiB kept per unclosed view"
    assert freed < 0.02 * 2**20, f"{freed / 2**20:.3f} MiB kept per closed view"
