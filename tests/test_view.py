"""msim.view: the interactive 3D viewer (k3d) draws what the run holds, says what to install
without k3d, and its standalone HTML export renders in a real browser (headless Chromium)."""

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
