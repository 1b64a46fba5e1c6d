"""System state, energies, forces, parameters, copying and pickling."""

import copy
import pickle

import numpy as np
import pytest

import msim
from msim.reference import core as ref


def test_cholmod_version_is_the_linked_library():
    # ask the shared library msim loaded for its version, independently through ctypes
    import ctypes
    import ctypes.util

    import msim._core

    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libcholmod" in line}
    if not paths:  # not Linux, or linked statically: fall back to the loader's search
        paths = {ctypes.util.find_library("cholmod")}
    version = (ctypes.c_int * 3)()
    ctypes.CDLL(paths.pop()).cholmod_version(version)
    assert msim.cholmod_version() == ".".join(str(v) for v in version)
    assert msim._core.cholmod_version is msim.cholmod_version


def test_energy_and_forces_match_the_numpy_reference(cloth):
    x, v = cloth.positions, cloth.velocities
    g = np.array([0.0, -9.81, 0.0])
    e = cloth.energy()
    assert e["kinetic"] == pytest.approx(0.5 * np.sum(cloth.mass[:, None] * v**2), rel=1e-13)
    assert e["spring"] == pytest.approx(
        ref.spring_energy(x, cloth.edges, cloth.stiffness, cloth.rest_lengths), rel=1e-13)
    assert e["gravity"] == pytest.approx(-np.sum(cloth.mass[:, None] * g * x), rel=1e-13)
    assert e["total"] == pytest.approx(e["kinetic"] + e["spring"] + e["gravity"], rel=1e-15)
    expected = ref.spring_forces(x, cloth.edges, cloth.stiffness, cloth.rest_lengths)
    np.testing.assert_allclose(cloth.forces(), expected + cloth.mass[:, None] * g,
                               rtol=1e-12, atol=1e-12)


def test_default_rest_lengths_are_the_lengths_in_vertices():
    mesh = msim.mesh.cloth_grid(4, 3, size=(3.0, 1.0))
    sim = msim.System(mesh.vertices, mesh.edges)
    d = mesh.vertices[mesh.edges[:, 0]] - mesh.vertices[mesh.edges[:, 1]]
    np.testing.assert_allclose(sim.rest_lengths, np.linalg.norm(d, axis=1), rtol=1e-15)
    assert sim.energy()["spring"] == 0.0


def test_parameters_round_trip_through_properties():
    mesh = msim.mesh.rope(5)
    sim = msim.System(mesh.vertices, mesh.edges, mass=np.arange(1.0, 6.0), stiffness=7.0,
                      fixed=np.array([True, False, False, False, True]), gravity=(0, 0, -1),
                      damping=0.5)
    np.testing.assert_array_equal(sim.mass, np.arange(1.0, 6.0))
    np.testing.assert_array_equal(sim.stiffness, np.full(4, 7.0))
    np.testing.assert_array_equal(sim.fixed, [0, 4])
    np.testing.assert_array_equal(sim.gravity, [0, 0, -1])
    np.testing.assert_array_equal(sim.edges, mesh.edges)
    assert sim.damping == 0.5 and sim.n_vertices == 5 and sim.n_springs == 4
    sim.fixed = [2]
    sim.stiffness = np.arange(4.0)
    np.testing.assert_array_equal(sim.fixed, [2])
    np.testing.assert_array_equal(sim.stiffness, np.arange(4.0))


def _run(sim, n=50):
    for _ in range(n):
        sim.step(1e-3, method="symplectic_euler")
    return sim.positions, sim.velocities


def test_pickle_continues_bit_identically(cloth):
    _run(cloth, 20)
    clone = pickle.loads(pickle.dumps(cloth))
    assert type(clone) is msim.System and clone.steps == cloth.steps
    assert clone.time == cloth.time
    xa, va = _run(cloth)
    xb, vb = _run(clone)
    np.testing.assert_array_equal(xa, xb)
    np.testing.assert_array_equal(va, vb)


@pytest.mark.parametrize("duplicate", [msim.System.copy, copy.copy, copy.deepcopy])
def test_copies_are_independent_and_continue_identically(cloth, duplicate):
    clone = duplicate(cloth)
    clone.stiffness = 1.0
    assert cloth.stiffness[0] == 100.0
    clone.stiffness = cloth.stiffness
    np.testing.assert_array_equal(_run(cloth)[0], _run(clone)[0])


def test_get_and_set_state_branch_one_state_into_several_runs(cloth):
    state = cloth.get_state()
    first = _run(cloth)
    cloth.set_state(state)
    assert cloth.steps == 0 and cloth.time == 0.0
    second = _run(cloth)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_set_state_is_atomic(cloth):
    state = cloth.get_state()
    bad = dict(state, velocities=np.zeros((3, 3)), positions=state["positions"] + 1)
    with pytest.raises(ValueError, match=r"velocities: expected an array of shape \(100, 3\)"):
        cloth.set_state(bad)
    np.testing.assert_array_equal(cloth.positions, state["positions"])


def test_step_info_and_trajectory(cloth):
    info = cloth.step(1e-3, method="symplectic_euler")
    assert info.method == "symplectic_euler" and info.dt == 1e-3
    assert info.iterations == 1 and info.converged and info.seconds >= 0
    assert info.residuals.shape == (0,)
    traj = cloth.simulate(30, 1e-3, "symplectic_euler", record_every=10, progress=False)
    assert traj.positions.shape == (4, 100, 3)
    np.testing.assert_allclose(traj.times, 1e-3 * np.array([1, 11, 21, 31]), rtol=1e-12)
    np.testing.assert_array_equal(traj.positions[-1], cloth.positions)
    assert set(traj.energies) == {"kinetic", "spring", "gravity", "collision", "self_contact",
                                  "total"}
    assert traj.energies["total"][-1] == cloth.energy()["total"]
    assert traj.seconds.shape == (30,) and traj.diverged is None


@pytest.mark.parametrize("method, options", [
    ("xpbd", {"iterations": 6}), ("xpbd", {"iterations": 4, "substeps": 2, "xpbd_damping": 0.3}),
    ("fms", {"iterations": 6}), ("fms", {"iterations": 50, "tol": 1e-4}),
    ("fms", {"iterations": 6, "acceleration": "anderson"}),
    ("implicit_euler", {"max_iterations": 3}), ("symplectic_euler", {})])
def test_history_false_skips_the_record_and_changes_no_bit(cloth, method, options):
    # the same steps with and without the per-iteration record: the same state bit for bit,
    # the same iteration counts, and empty residuals and objectives without it
    quiet = cloth.copy()
    dt = 1e-3 if method == "symplectic_euler" else 1 / 30
    for _ in range(3):
        full, lean = cloth.step(dt, method, **options), quiet.step(dt, method, history=False,
                                                                    **options)
        assert (lean.iterations, lean.converged) == (full.iterations, full.converged)
        assert lean.residuals.shape == lean.objectives.shape == (0,)
        assert len(full.residuals) == (full.iterations + 1 if method != "symplectic_euler" else 0)
    np.testing.assert_array_equal(quiet.positions, cloth.positions)
    np.testing.assert_array_equal(quiet.velocities, cloth.velocities)
    with pytest.raises(TypeError, match="history: expected True or False, got 'no'"):
        cloth.step(dt, method, history="no")


def test_simulate_stops_at_divergence_when_asked(cloth):
    cloth.stiffness = 1e5
    traj = cloth.simulate(10_000, 0.01, "explicit_euler", on_divergence="stop")
    assert traj.diverged is not None and traj.diverged == len(traj.seconds)
    assert np.all(np.isfinite(traj.positions))
    with pytest.raises(msim.DivergenceError):
        cloth.simulate(10_000, 0.01, "explicit_euler")


def test_simulate_shows_a_progress_bar(cloth, capsys):
    cloth.simulate(5, 1e-3, "symplectic_euler", progress=True)
    assert "5/5" in capsys.readouterr().err


def test_empty_system_and_single_vertex_step():
    empty = msim.System(np.zeros((0, 3)), np.zeros((0, 2), int))
    empty.step(0.1, method="symplectic_euler")
    assert empty.energy()["total"] == 0.0 and empty.positions.shape == (0, 3)
    single = msim.System([[0.0, 1.0, 0.0]], np.zeros((0, 2), int), mass=2.0)
    single.step(0.5, method="explicit_euler")
    np.testing.assert_allclose(single.velocities, [[0, -9.81 * 0.5, 0]])
    np.testing.assert_array_equal(single.positions, [[0.0, 1.0, 0.0]])  # x moves with v(t) = 0


def test_coincident_vertices_make_no_nan():
    sim = msim.System(np.zeros((2, 3)), [[0, 1]], rest_lengths=[0.0])
    sim.step(0.01, method="symplectic_euler")
    assert np.all(np.isfinite(sim.positions)) and sim.energy()["spring"] == 0.0
    # a zero-length spring at zero rest length pushes nothing: both fall freely, x = h^2 g
    np.testing.assert_allclose(sim.positions, [[0, -9.81e-4, 0]] * 2, rtol=1e-15, atol=0)


def test_methods_table_matches_the_core():
    for name in msim.METHODS:
        sim = msim.System(np.zeros((1, 3)), np.zeros((0, 2), int))
        assert sim.step(0.01, method=name).method == name
        assert name in msim.SUMMARY


def test_constructor_defaults_are_the_core_tables_and_the_docstring_says_them():
    defaults = msim._core.defaults()
    sim = msim.System([[0.0, 0, 0], [1, 0, 0]], [[0, 1]])
    np.testing.assert_array_equal(sim.mass, [defaults["mass"]] * 2)
    np.testing.assert_array_equal(sim.stiffness, [defaults["stiffness"]])
    np.testing.assert_array_equal(sim.gravity, defaults["gravity"])
    for name in ("damping", "contact_stiffness", "contact_scale", "friction", "threads"):
        assert getattr(sim, name) == defaults[name]
    assert defaults["mass"] == 0.01 and defaults["gravity"] == (0.0, -9.81, 0.0)  # the contract
    assert "mass=0.01, stiffness=1000," in msim.System.__doc__
    # each default has the type its keyword takes (the table's kind of value), so they pass back
    assert defaults["self_contact"] is False and type(defaults["self_contact_ring"]) is int
    assert "self_contact=False," in msim.System.__doc__
    assert msim.System([[0.0, 0, 0], [1, 0, 0]], [[0, 1]], **defaults).parameters().keys() == {
        "vertices", "edges", *msim._core.model_parameters()}


def test_a_history_longer_than_the_cap_keeps_its_first_entries_and_says_so():
    # one XPBD spring, 2^20 + 3 sweeps: the record keeps HISTORY_MAX entries, the count is
    # every iteration, and a HistoryWarning says what was dropped
    sim = msim.System([[0, 0, 0], [1.1, 0, 0]], [[0, 1]], fixed=[0], gravity=(0, 0, 0),
                      rest_lengths=[1.0])
    cap = msim._core.HISTORY_MAX
    assert cap == 2**20
    with pytest.warns(msim.HistoryWarning, match=f"first {cap} of the step's {cap + 4} entries"):
        info = sim.step(1e-3, "xpbd", iterations=cap + 3, substeps=1)
    assert info.iterations == cap + 3 and len(info.residuals) == len(info.objectives) == cap
    assert info.residuals[0] > 0 and info.residuals[-1] < 1e-12
