"""Values that try to break the binding: integer options at the edge of C's int, arguments
whose conversion re-enters __init__, extreme collider rows, arrays where scalars belong. Each
either works or raises an exception naming the argument, and nothing is corrupted (the suite
also runs under AddressSanitizer, which sees any out-of-bounds access these provoke)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import msim
from builders import cloth


# ---------------------------------------------------------------- integer options


@pytest.mark.parametrize("method,name,options", [
    ("xpbd", "iterations", {"iterations": 2**31 - 1}),
    ("fms", "iterations", {"iterations": 2**31 - 1, "tol": 1e-3}),
    ("implicit_euler", "max_iterations", {"max_iterations": 2**31 - 1, "tol": 1e-6}),
    ("linearized_implicit", "max_iterations", {"max_iterations": 2**31 - 1}),
    ("fms", "window", {"acceleration": "anderson", "window": 10**7}),
    ("fms", "chebyshev_delay", {"acceleration": "chebyshev", "chebyshev_delay": 2**40}),
    ("xpbd", "substeps", {"substeps": 2**63}),
])
def test_huge_integer_options_are_refused_by_name(method, name, options):
    sim = cloth(6)
    before = sim.positions
    with pytest.raises(ValueError, match=rf"{name}: expected an integer in \[\d+, \d+\], got"):
        sim.step(1 / 60, method, **options)
    np.testing.assert_array_equal(sim.positions, before)
    assert sim.steps == 0


@pytest.mark.parametrize("method,options", [
    ("fms", {"iterations": 10**9, "tol": 1e-3}),
    ("implicit_euler", {"max_iterations": 10**9, "tol": 1e-6}),
])
def test_the_largest_caps_run_when_a_tolerance_stops_them(method, options):
    # the cap reaches C as given and the loop stops at the tolerance, far below it
    sim = cloth(6)
    info = sim.step(1 / 60, method, **options)
    assert info.converged and info.residuals[-1] < options["tol"]
    assert len(info.residuals) == info.iterations + 1 < 10**3


def test_histories_are_bounded_when_a_step_runs_longer():
    sim = cloth(3)
    info = sim.step(1 / 60, "xpbd", iterations=(1 << 20) + 5)
    assert info.iterations == (1 << 20) + 5
    assert len(info.residuals) == len(info.objectives) == 1 << 20


def test_simulate_refuses_a_step_count_beyond_int64_by_name():
    sim = cloth(6)
    with pytest.raises(ValueError, match=r"steps: expected an integer"):
        sim.simulate(2**70, 1e-3, "symplectic_euler")
    with pytest.raises(ValueError, match=r"steps: expected an integer in \[0, \d+\], got"):
        sim.set_state(dict(sim.get_state(), steps=2**70))


@pytest.mark.parametrize("value", [np.array([1.0, 2.0]), [1.0], "0.5"])
def test_array_where_a_scalar_belongs_names_the_argument(value):
    sim = cloth(6)
    with pytest.raises(TypeError, match=r"damping: expected a real number, got"):
        sim.damping = value
    with pytest.raises(TypeError, match=r"damping: expected a real number, got"):
        msim.System(sim.positions, sim.edges, damping=value)
    with pytest.raises(TypeError, match=r"dt: expected a real number, got"):
        sim.step(value, "symplectic_euler")
    assert sim.damping == 0.0 and sim.steps == 0


# ---------------------------------------------------------------- re-entrancy


class Reinit:
    """An array-like whose conversion re-initialises `sim` with a 2-vertex System first."""

    def __init__(self, sim: msim.System, value: np.ndarray):
        self.sim, self.value = sim, value

    def __array__(self, dtype=None, copy=None):
        self.sim.__init__(np.zeros((2, 3)) + [[0, 0, 0], [1, 0, 0]], [[0, 1]])
        return np.asarray(self.value, dtype=dtype)


@pytest.mark.parametrize("name,per", [("mass", "vertex"), ("stiffness", "spring"),
                                      ("rest_lengths", "spring")])
def test_a_setter_whose_argument_reinitialises_checks_the_new_system(name, per):
    sim = cloth(6)
    n = sim.n_vertices if per == "vertex" else sim.n_springs
    with pytest.raises(ValueError, match=rf"{name}: expected an array of shape \(1,\)|"
                                         rf"{name}: expected an array of shape \(2,\)"):
        setattr(sim, name, Reinit(sim, np.full(n, 0.5)))
    assert sim.n_vertices == 2  # the re-initialised System, intact
    setattr(sim, name, Reinit(sim, np.full(2 if per == "vertex" else 1, 0.5)))
    np.testing.assert_array_equal(getattr(sim, name), 0.5)


@pytest.mark.parametrize("name", ["positions", "velocities", "external_forces"])
def test_points_whose_conversion_reinitialises_are_checked_against_the_new_system(name):
    sim = cloth(6)
    with pytest.raises(ValueError, match=rf"{name}: expected an array of shape \(2, 3\)"):
        setattr(sim, name, Reinit(sim, np.ones((sim.n_vertices, 3))))
    with pytest.raises(ValueError, match=r"positions: expected an array of shape \(2, 3\)"):
        sim.set_state({"positions": Reinit(sim, np.ones((36, 3))),
                       "velocities": np.zeros((36, 3))})
    with pytest.raises(ValueError, match=r"external_forces: expected an array of shape \(2, 3\)"):
        sim.set_state({"positions": np.ones((2, 3)), "velocities": np.ones((2, 3)),
                       "external_forces": Reinit(sim, np.ones((36, 3)))})
    sim.set_state({"positions": np.ones((2, 3)), "velocities": Reinit(sim, np.ones((2, 3))),
                   "external_forces": Reinit(sim, np.full((2, 3), 3.0))})
    np.testing.assert_array_equal(sim.velocities, 1.0)
    np.testing.assert_array_equal(sim.external_forces, 3.0)


def test_fixed_whose_conversion_reinitialises_is_checked_against_the_new_system():
    sim = cloth(6)
    with pytest.raises(ValueError, match=r"fixed: expected vertex indices in \[0, 2\), got 30"):
        sim.fixed = Reinit(sim, np.array([0, 30]))
    sim.fixed = Reinit(sim, np.array([True, False]))
    np.testing.assert_array_equal(sim.fixed, [0])


# ---------------------------------------------------------------- colliders


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1.0])
def test_plane_normals_of_any_magnitude_are_normalised(scale):
    sim = cloth(6)
    sim.planes = [[0.0, 2.0 * scale, 0.0, -0.6 * scale]]  # y >= -0.3
    np.testing.assert_allclose(sim.planes, [[0.0, 1.0, 0.0, -0.3]], rtol=1e-15)


def test_a_plane_whose_offset_cannot_be_normalised_is_refused():
    sim = cloth(6)
    with pytest.raises(ValueError, match=r"planes: expected an offset / \|normal\| that stays "
                                         r"finite in row 0"):
        sim.planes = [[0.0, 1e-200, 0.0, 1e200]]
    assert len(sim.planes) == 0


# ---------------------------------------------------------------- subclasses


class Labelled(msim.System):
    """A user's subclass with an attribute of its own."""

    def __init__(self, *args, label: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.label = label


def test_attributes_of_user_subclasses_survive_copy_and_pickle():
    mesh = msim.mesh.cloth_grid(4, 4)
    sim = Labelled(mesh.vertices, mesh.edges, label="run 7")
    sim.note = {"k": 1.0}
    sim.step(1e-3, "symplectic_euler")
    for twin in (sim.copy(), copy.copy(sim), copy.deepcopy(sim),
                 pickle.loads(pickle.dumps(sim))):
        assert type(twin) is Labelled
        assert (twin.label, twin.note) == ("run 7", {"k": 1.0})
        np.testing.assert_array_equal(twin.positions, sim.positions)
    assert copy.deepcopy(sim).note is not sim.note


# ---------------------------------------------------------------- workspaces


def test_anderson_mixes_the_window_asked_for_after_a_larger_one():
    # the workspace keeps the largest window's columns; a smaller window asked for later is
    # the one mixed, so a copy (which starts with a fresh workspace) continues bit-identically
    mesh = msim.mesh.cloth_grid(12, 12)
    sim = msim.System(mesh.vertices, mesh.edges, mass=1 / 144, stiffness=1000.0, fixed=[0, 11])
    for _ in range(3):
        sim.step(1 / 30, "fms", acceleration="anderson", window=8, iterations=20)
    twin, unpickled = sim.copy(), pickle.loads(pickle.dumps(sim))
    for s in (sim, twin, unpickled):
        for _ in range(10):
            s.step(1 / 30, "fms", acceleration="anderson", window=3, iterations=20)
    np.testing.assert_array_equal(twin.positions, sim.positions)
    np.testing.assert_array_equal(unpickled.positions, sim.positions)
