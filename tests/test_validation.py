"""Bad input raises a clear exception naming the argument, the expected and the received."""

import numpy as np
import pytest

import msim
from builders import cloth

V = np.zeros((3, 3))
E = [[0, 1], [1, 2]]

CASES = [
    (dict(vertices=np.zeros((3, 2))), ValueError,
     r"vertices: expected an array of shape \(n, 3\), got shape \(3, 2\)"),
    (dict(vertices=np.zeros(3)), ValueError, r"vertices: .* got shape \(3,\)"),
    (dict(vertices=[[0, 0, 0], [1, 0]]), TypeError, r"vertices: expected an array of real"),
    (dict(vertices=V + 0j), TypeError, r"vertices: .* got dtype complex128"),
    (dict(vertices=np.array([["a"] * 3] * 3)), TypeError, r"vertices: .* got dtype <U1"),
    (dict(vertices=np.array([[None] * 3] * 3)), TypeError, r"vertices: .* got dtype object"),
    (dict(vertices=np.where(np.eye(3) > 0, np.nan, 0)), ValueError,
     r"vertices: expected finite values, got nan"),
    (dict(vertices=np.full((3, 3), np.inf)), ValueError, r"vertices: .* got inf"),
    (dict(edges=[[0, 3]]), ValueError, r"edges: expected vertex indices in \[0, 3\), got 3"),
    (dict(edges=[[-1, 0]]), ValueError, r"edges: .* got -1 in row 0"),
    (dict(edges=[[1, 1]]), ValueError, r"edges: expected 2 distinct vertices per spring, got vertex 1 twice in row 0"),
    (dict(edges=[[0, 1.5]]), TypeError, r"edges: expected an array of integers, got dtype float64"),
    (dict(edges=[0, 1]), ValueError, r"edges: expected an array of shape \(m, 2\), got shape \(2,\)"),
    (dict(mass=0.0), ValueError, r"mass: expected finite values > 0.0, got 0.0"),
    (dict(mass=[1, 1]), ValueError, r"mass: expected an array of shape \(3,\) \(one per vertex\)"),
    (dict(mass=[1, np.nan, 1]), ValueError, r"mass: .* got nan at flat index 1"),
    (dict(stiffness=-1.0), ValueError, r"stiffness: expected finite values >= 0.0, got -1.0"),
    (dict(stiffness=[1, 2, 3]), ValueError, r"stiffness: .* shape \(2,\) \(one per spring\)"),
    (dict(rest_lengths=[1, -1]), ValueError, r"rest_lengths: .* >= 0.0, got -1.0"),
    (dict(fixed=[3]), ValueError, r"fixed: expected vertex indices in \[0, 3\), got 3"),
    (dict(fixed=[-1]), ValueError, r"fixed: .* got -1"),
    (dict(fixed=[[0]]), ValueError, r"fixed: expected an array of shape \(k,\)"),
    (dict(fixed=np.array([True, False])), ValueError, r"fixed: .* \(3,\) for a boolean mask"),
    (dict(fixed=["a"]), TypeError, r"fixed: expected an array of integers"),
    (dict(gravity=(0, 1)), ValueError, r"gravity: expected an array of shape \(3,\)"),
    (dict(gravity=(0, np.inf, 0)), ValueError, r"gravity: expected finite values, got inf"),
    (dict(damping=-0.1), ValueError, r"damping: expected finite values >= 0.0, got -0.1"),
    (dict(damping="x"), TypeError, r"damping: expected a real number, got str"),
    (dict(damping=1j), TypeError, r"damping: expected a real number, got complex"),
]


@pytest.mark.parametrize("change,error,message", CASES)
def test_constructor_rejects(change, error, message):
    args = dict(vertices=V, edges=E) | change
    with pytest.raises(error, match=message):
        msim.System(args.pop("vertices"), args.pop("edges"), **args)


def test_unknown_constructor_keyword():
    with pytest.raises(TypeError, match="stifness"):
        msim.System(V, E, stifness=1.0)


@pytest.fixture
def sim():
    return msim.System(V, E)


@pytest.mark.parametrize("call,error,message", [
    (lambda s: s.step(0.0, method="symplectic_euler"), ValueError, r"dt: expected finite values > 0.0, got 0.0"),
    (lambda s: s.step(-1, method="symplectic_euler"), ValueError, r"dt: .* got -1.0"),
    (lambda s: s.step(np.nan, method="symplectic_euler"), ValueError, r"dt: .* got nan"),
    (lambda s: s.step("a", method="symplectic_euler"), TypeError, r"dt: expected a real number, got str"),
    (lambda s: s.step(0.1, method="rk45"), ValueError, r"method: expected one of \[.*\], got 'rk45'"),
    (lambda s: s.step(0.1, method=3), TypeError, r"method: expected a string, got int"),
    (lambda s: s.step(0.1, method="symplectic_euler", iterations=3), ValueError,
     r"iterations: not an option of method 'symplectic_euler'"),
    (lambda s: s.simulate(-1, 0.1, "symplectic_euler"), ValueError,
     r"steps: expected an integer in \[0, 9223372036854775807\], got -1"),
    (lambda s: s.simulate(1.5, 0.1, "symplectic_euler"), TypeError, r"steps: expected an integer, got float"),
    (lambda s: s.simulate(2, 0.1, "symplectic_euler", record_every=0), ValueError, r"record_every: .* >= 1"),
    (lambda s: s.simulate(2, 0.1, "symplectic_euler", on_divergence="ignore"), ValueError, r"on_divergence"),
    (lambda s: setattr(s, "positions", np.zeros((2, 3))), ValueError,
     r"positions: expected an array of shape \(3, 3\), got shape \(2, 3\)"),
    (lambda s: setattr(s, "velocities", np.full((3, 3), np.nan)), ValueError, r"velocities: .* got nan"),
    (lambda s: setattr(s, "mass", -1), ValueError, r"mass: .* > 0.0, got -1.0"),
    (lambda s: setattr(s, "fixed", [7]), ValueError, r"fixed: .* got 7"),
    (lambda s: delattr(s, "positions"), AttributeError, r"positions cannot be deleted"),
    (lambda s: s.set_state([1, 2]), TypeError, r"state: expected a dict"),
    (lambda s: s.set_state({"positions": V}), ValueError, r"state: .* missing \['velocities'\]"),
    (lambda s: s.set_state({"positions": V, "velocities": V, "previous_dt": 0.1}), ValueError,
     r"previous_dt: .* needs previous_positions and previous_velocities"),
    (lambda s: s.set_state({"positions": V, "velocities": V, "previous_dt": -0.1,
                            "previous_positions": V, "previous_velocities": V}), ValueError,
     r"previous_dt: .* >= 0.0, got -0.1"),
    (lambda s: s.set_state({"positions": V, "velocities": V, "previous_dt": 0.1,
                            "previous_positions": V, "previous_velocities": V[:2]}), ValueError,
     r"previous_velocities: expected an array of shape \(3, 3\), got shape \(2, 3\)"),
])
def test_calls_reject(sim, call, error, message):
    before = sim.get_state(), sim.mass, sim.fixed
    with pytest.raises(error, match=message):
        call(sim)
    after = sim.get_state(), sim.mass, sim.fixed
    np.testing.assert_array_equal(after[0]["positions"], before[0]["positions"])
    np.testing.assert_array_equal(after[1], before[1])
    np.testing.assert_array_equal(after[2], before[2])


@pytest.mark.parametrize("layout", ["strided", "fortran", "bigendian", "int"])
def test_any_memory_layout_gives_the_same_system(layout):
    mesh = msim.mesh.cloth_grid(4, 4)
    v, e = mesh.vertices, mesh.edges
    if layout == "strided":
        v, e = np.repeat(v, 2, axis=0)[::2], np.repeat(e, 2, axis=0)[::2]
    elif layout == "fortran":
        v, e = np.asfortranarray(v), np.asfortranarray(e)
    elif layout == "bigendian":
        v, e = v.astype(">f8"), e.astype(">i4")
    else:
        v = (v * 3).astype(np.int32)
    base = msim.System((mesh.vertices * 3 if layout == "int" else mesh.vertices), mesh.edges)
    sim = msim.System(v, e)
    for s in (base, sim):
        for _ in range(5):
            s.step(1e-3, method="symplectic_euler")
    np.testing.assert_array_equal(sim.positions, base.positions)


@pytest.mark.parametrize("method, options, message", [
    ("fms", {"rho": 1.0}, r"rho: expected a real number in \[0.0, 1.0\), got 1.0"),
    ("fms", {"relax": 2}, r"relax: expected a real number in \[0.0, 2.0\), got 2"),
    ("fms", {"pin_weight": -1.0}, r"pin_weight: expected a real number in \[0.0, inf\], got -1.0"),
    ("implicit_euler", {"tol": np.inf}, r"tol: expected a real number in \[0.0, inf\], got inf"),
    ("implicit_euler", {"max_iterations": 0},
     r"max_iterations: expected an integer in \[1, 1000000000\], got 0"),
    ("fms", {"window": 101}, r"window: expected an integer in \[1, 100\], got 101"),
])
def test_options_out_of_range_name_the_option_and_the_range(sim, method, options, message):
    with pytest.raises(ValueError, match=message):
        sim.step(0.01, method, **options)
    assert sim.steps == 0


@pytest.mark.parametrize("options, error, message", [
    ({"rho": 1.5}, ValueError, r"rho: expected a real number in \[0.0, 1.0\), got 1.5"),
    ({"acceleration": 3}, TypeError,
     r"acceleration: expected one of \['none', 'chebyshev', 'anderson'\] \(a string\), got int"),
    ({"start": "last"}, ValueError, r"start: expected one of \[.*'lowest'.*\], got 'last'"),
])
def test_the_core_parses_the_options_against_the_same_table(sim, options, error, message):
    # the private _step takes the public options and parses them itself, in C, against the
    # registry that METHODS shows
    with pytest.raises(error, match=message):
        sim._step(0.01, "fms", **options)
    with pytest.raises(error, match=message):
        msim._core.check_options("fms", **options)
    assert sim.steps == 0


def test_every_option_default_lies_in_its_range_and_choices_follow_the_core():
    for name, options in msim.METHODS.items():
        for option, spec in options.items():
            if isinstance(spec.kind, tuple):
                assert spec.default in spec.kind
            elif spec.default is None:  # an iteration cap left to the solver
                assert spec.core == "iterations", (name, option)
            elif spec.kind is not bool:
                assert spec.low <= spec.default <= spec.high, (name, option)
    # the Hessian treatments by index: 'none' is the exact Hessian, so 'shift' (which adds its
    # shift only to the system matrix) gives the same blocks; 'clamp' differs once compressed
    sim = msim.System([[0.0, 0, 0], [0.5, 0, 0]], [[0, 1]], rest_lengths=[1.0])
    spd = msim.methods.SPD
    exact = sim._hessian_blocks(spd.index("none"))
    np.testing.assert_array_equal(sim._hessian_blocks(spd.index("shift")), exact)
    assert not np.array_equal(sim._hessian_blocks(spd.index("clamp")), exact)


@pytest.mark.parametrize("method", ["implicit_euler", "implicit_midpoint", "bdf2"])
def test_an_implicit_method_caps_each_solver_at_its_own_default(method):
    sim = cloth(6)
    assert sim.copy().step(1 / 30, method).iterations == 1  # Newton: the course convention
    assert sim.copy().step(1 / 30, method, solver="fms").iterations == 10
    assert sim.copy().step(1 / 30, method, solver="fms", max_iterations=3).iterations == 3
    with pytest.raises(ValueError, match="max_iterations: another name of iterations"):
        sim.step(1 / 30, method, iterations=3, max_iterations=3)
    assert sim.steps == 0


@pytest.mark.parametrize("where", ["vertices", "positions", "velocities", "set_state"])
def test_positions_and_velocities_beyond_the_divergence_bound_are_refused_where_they_enter(where):
    # a state beyond 1e10 m or m/s counts as diverged at the first step: it is refused where
    # it enters, naming the argument, not accepted and failed later
    far = np.array([[0.0, 0.0, 0.0], [2e10, 0.0, 0.0]])
    if where == "vertices":
        with pytest.raises(ValueError, match=r"vertices: .*at most 1e10.*got 2.*flat index 3"):
            msim.System(far, [[0, 1]])
        return
    sim = msim.System([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [[0, 1]])
    before = sim.get_state()
    name = "positions" if where == "set_state" else where
    with pytest.raises(ValueError, match=rf"{name}: .*at most 1e10"):
        if where == "set_state":
            sim.set_state({**before, "positions": far})
        else:
            setattr(sim, where, far)
    np.testing.assert_array_equal(sim.positions, before["positions"])
    sim.external_forces = far  # a force [N] has no such bound
