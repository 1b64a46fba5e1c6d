"""simulate keeps what it recorded when a run stops on an exception, warns of a start inside
a collider, and books the work a before_step script does; set_state refuses keys it does not
know."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import msim
from builders import cloth


def test_an_exception_in_before_step_carries_the_frames_recorded_so_far():
    sim = cloth(6)

    def script(s: msim.System) -> None:
        if s.steps == 5:
            raise RuntimeError("the script failed")

    with pytest.raises(RuntimeError, match="the script failed") as caught:
        sim.simulate(100, 1e-3, "symplectic_euler", before_step=script)
    traj = caught.value.trajectory
    assert len(traj.seconds) == 5 and len(traj.times) == 6
    np.testing.assert_array_equal(traj.positions[-1], sim.positions)
    assert traj.energies["work"].shape == (6,)
    assert any("stopped by RuntimeError after 5 of 100 steps" in note
               for note in caught.value.__notes__)


def test_a_divergence_raised_carries_the_frames_before_it():
    sim = msim.scenes.hanging_cloth(6).system
    with pytest.raises(msim.DivergenceError) as caught:
        sim.simulate(500, 0.05, "explicit_euler", record_every=1)
    traj = caught.value.trajectory
    step = caught.value.step
    assert len(traj.seconds) == step and len(traj.times) == step + 1
    np.testing.assert_array_equal(traj.positions[-1], sim.positions)  # the state before it
    assert any("stopped by DivergenceError" in note for note in caught.value.__notes__)


def test_set_state_refuses_keys_it_does_not_know():
    sim = cloth(6)
    state = sim.get_state()
    forces = np.ones((sim.n_vertices, 3))
    sim.external_forces = forces
    before = sim.get_state()
    with pytest.raises(ValueError, match=r"state: unknown keys \['external_force'\] \(a state "
                                         r"holds \['positions', 'velocities', 'external_forces'"):
        sim.set_state(dict(state, external_force=np.zeros((sim.n_vertices, 3))))
    np.testing.assert_array_equal(sim.external_forces, forces)  # not reset
    np.testing.assert_array_equal(sim.positions, before["positions"])


@pytest.mark.parametrize("option", ["solver", "spd", "start", "acceleration"])
def test_a_choice_given_an_array_names_the_option(option):
    sim = cloth(6)
    with pytest.raises(TypeError, match=rf"{option}: expected one of \[.*\] \(a string\), got "
                                        "ndarray"):
        sim.step(1 / 60, "implicit_euler", **{option: np.array(["newton", "fms"])})
    assert sim.steps == 0


# ---------------------------------------------------------------- a start inside a collider


def test_a_run_that_starts_inside_a_sphere_warns_naming_the_deepest_vertex():
    mesh = msim.mesh.cloth_grid(6, 6, size=1.0, origin=(-0.5, 0.0, -0.5))
    centre, radius, scale = np.array([0.1, 0.0, 0.0]), 0.3, 1.1
    sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, spheres=[[*centre, radius]],
                      contact_scale=scale, fixed=[0])
    depth = scale * radius - np.linalg.norm(mesh.vertices - centre, axis=1)
    depth[0] = -np.inf  # fixed vertices do not count
    deepest = int(np.argmax(depth))
    with pytest.warns(msim.ContactWarning,
                      match=rf"vertex {deepest} starts {depth[deepest]:.6g} m inside sphere 0 "):
        sim.simulate(1, 1e-4, "symplectic_euler")


def test_a_run_that_starts_behind_a_plane_warns_and_a_resting_one_does_not():
    mesh = msim.mesh.cloth_grid(4, 4, size=1.0, origin=(0.0, 0.0, 0.0))
    vertices = mesh.vertices.copy()
    vertices[5, 1] = -0.25  # 0.25 m below the ground y = 0
    sim = msim.System(vertices, mesh.edges, mass=0.01, planes=[[0, 1, 0, 0]])
    with pytest.warns(msim.ContactWarning, match=r"vertex 5 starts 0.25 m inside plane 0"):
        sim.simulate(1, 1e-4, "symplectic_euler")
    # a cloth that came to rest on a sphere by penalty contact sits m g / k_c deep: no warning
    scene = msim.scenes.cloth_on_sphere(8)
    scene.run(60, "implicit_euler")
    with warnings.catch_warnings():
        warnings.simplefilter("error", msim.ContactWarning)
        scene.run(2, "implicit_euler")


# ---------------------------------------------------------------- work of a script


def test_total_minus_the_scripts_work_is_conserved_by_a_symplectic_method():
    """A particle (1 kg) on a spring (100 N/m) to a fixed anchor, no gravity, no damping, no
    friction, pushed along the spring by a plane moving at 0.5 m/s (contact 1e4 N/m).
    Symplectic Euler at omega h = 0.01 conserves its (modified) energy to O(omega h): the
    energy the moving plane puts in is the work the script did, so total - work stays at its
    start value to that order, while total itself grows by the work."""
    sim = msim.System([[0.0, 0, 0], [1.0, 0, 0]], [[0, 1]], mass=1.0, stiffness=100.0,
                      fixed=[0], gravity=(0, 0, 0), planes=[[1, 0, 0, 0.9]],
                      contact_stiffness=1e4, friction=0.0)

    def push(s: msim.System) -> None:  # outside where x >= 0.9 + 0.5 t
        s.planes = [[1.0, 0, 0, 0.9 + 0.5 * s.time]]

    traj = sim.simulate(8000, 1e-4, "symplectic_euler", record_every=10, before_step=push)
    # the plane moved: one row per frame, where the script put it for the frame's last step
    np.testing.assert_allclose(traj.planes[1:, 0, 3], 0.9 + 0.5 * (traj.times[1:] - 1e-4),
                               rtol=1e-12)
    total, work = traj.energies["total"], traj.energies["work"]
    assert work[0] == 0.0 and work[-1] > 2.0  # the plane pushed the particle 0.3 m and more
    assert total[-1] - total[0] == pytest.approx(work[-1], rel=0.02)
    assert np.abs((total - work) - total[0]).max() < 0.02 * work[-1]
    # without a script there is no work to book
    assert "work" not in sim.simulate(2, 1e-4, "symplectic_euler").energies
