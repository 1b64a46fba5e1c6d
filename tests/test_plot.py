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
