"""Model parameters set between steps act exactly as if the System had been built with them.

A method that caches work across steps (FMS's and L-BFGS's prefactored matrix
M + h^2 (L + contact + friction), XPBD's colouring, Newton's symbolic analysis) must rebuild it
when a parameter it depends on changes, and only then. The oracle is a fresh System built
from `parameters()` with the same state: its first step has nothing cached, so after any
setter the next steps of both must agree bit for bit.
"""

import numpy as np
import pytest

import msim

H = 1 / 60
# every settable model parameter and a new value for it (a function of the System)
CHANGES = {
    "mass": lambda s: 1.5 * s.mass,
    "stiffness": lambda s: 2.0 * s.stiffness,
    "rest_lengths": lambda s: 1.01 * s.rest_lengths,
    "fixed": lambda s: [0],
    "gravity": lambda s: (0.0, -5.0, 1.0),
    "damping": lambda s: 0.3,
    "planes": lambda s: s.planes + [0, 0, 0, 0.001],
    "spheres": lambda s: [[0.0, -0.2, 0.0, 0.1]],
    "contact_stiffness": lambda s: 3e4,
    "contact_scale": lambda s: 1.2,
    "friction": lambda s: 0.5,
    "self_contact": lambda s: True,
    "self_thickness": lambda s: 0.02,
    "self_stiffness": lambda s: 2e4,
    "self_contact_ring": lambda s: 1,
    "self_friction": lambda s: 0.4,
    "threads": lambda s: 2,
}
METHODS = {"fms": {}, "implicit_euler": {"solver": "lbfgs"}, "xpbd": {},
           "linearized_implicit": {}, "symplectic_euler": {}}


def resting_cloth() -> msim.System:
    """An 8x8 cloth that has come to rest on the ground plane under 40 FMS steps of 1/60 s:
    its vertices touch the plane, so FMS's factor holds h^2 k_c on them. Without friction:
    FMS's friction stiffness, which follows the contact force, would rebuild the factor on
    its own and hide a missed invalidation."""
    mesh = msim.mesh.cloth_grid(8, 8, size=1.0)
    sim = msim.System(mesh.vertices + [0, 0.01, 0], mesh.edges, mass=0.01,
                      planes=[[0, 1, 0, 0]], faces=mesh.faces)
    for _ in range(40):
        sim.step(H, "fms")
    return sim


def test_every_settable_parameter_is_listed():
    settable = set(resting_cloth().parameters()) - {"vertices", "edges", "faces"}
    assert settable == set(CHANGES)


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("name", sorted(CHANGES))
def test_after_a_setter_the_next_steps_equal_a_fresh_systems(name, method):
    # the defect this guards: contact_stiffness set on a cloth resting on the ground left FMS's
    # factor holding the old h^2 k_c, and the second step after it raised DivergenceError
    sim = resting_cloth()
    options = METHODS[method]
    sim.step(H, method, **options)  # whatever the method caches, it holds now
    setattr(sim, name, CHANGES[name](sim))
    fresh = msim.System(**sim.parameters())
    fresh.set_state(sim.get_state())
    for _ in range(3):
        sim.step(H, method, **options)
        fresh.step(H, method, **options)
    np.testing.assert_array_equal(sim.positions, fresh.positions)
    np.testing.assert_array_equal(sim.velocities, fresh.velocities)


def test_a_factor_is_rebuilt_once_per_change_it_depends_on_and_never_otherwise():
    sim = resting_cloth()
    count = sim._fms_factorizations
    sim.step(H, "fms")
    before = count()
    # not in A; changes small enough that no vertex leaves or enters the contact set (which
    # FMS's matrix also follows)
    for name, value in (("rest_lengths", 0.999 * sim.rest_lengths), ("gravity", (0, -12.0, 0)),
                        ("damping", 0.3), ("threads", 2)):
        setattr(sim, name, value)
        sim.step(H, "fms")
    assert count() == before
    for name in ("mass", "stiffness", "contact_stiffness"):  # in A: one refactorisation each
        setattr(sim, name, CHANGES[name](sim))
        sim.step(H, "fms")
        sim.step(H, "fms")
        assert count() == before + 1, name
        before = count()


# ---------------------------------------------------------------- options each solver reads

SOLVERS = msim._core.solvers()
IMPLICIT = msim.methods.METHODS["implicit_euler"]


def _cases(read: bool):
    """(solver, public option) pairs of the implicit methods' options, read or not by it."""
    return [(solver, name) for solver, row in SOLVERS.items() for name, opt in IMPLICIT.items()
            if name != "solver" and (opt.core in row["reads"]) == read]


@pytest.mark.parametrize("solver, option", _cases(read=False))
def test_an_option_the_solver_does_not_read_is_refused_naming_both(solver, option):
    # e.g. solver='lbfgs' with acceleration='anderson' ran plain L-BFGS and said nothing
    sim = resting_cloth()
    before = sim.get_state()
    value = IMPLICIT[option].default
    with pytest.raises(ValueError, match=f"^{option}: solver '{solver}' does not read it"):
        sim.step(H, "implicit_euler", solver=solver, **{option: value})
    np.testing.assert_array_equal(sim.positions, before["positions"])


@pytest.mark.parametrize("solver, option", _cases(read=True))
def test_an_option_the_solver_reads_at_its_default_changes_nothing(solver, option):
    a, b = resting_cloth(), resting_cloth()
    value = IMPLICIT[option].default
    a.step(H, "implicit_euler", solver=solver)
    b.step(H, "implicit_euler", solver=solver, **{option: value})
    np.testing.assert_array_equal(a.positions, b.positions)


@pytest.mark.parametrize("solver, acceleration", [
    (solver, accel) for solver, row in SOLVERS.items() if row["accelerations"]
    for accel in IMPLICIT["acceleration"].kind if accel not in row["accelerations"]])
def test_an_acceleration_the_solver_does_not_offer_is_refused_before_any_step(solver,
                                                                              acceleration):
    # the registry row of each solver of g lists the accelerations it offers (VBD: no Anderson)
    message = f"^acceleration: solver '{solver}' does not take acceleration='{acceleration}'$"
    with pytest.raises(ValueError, match=message):
        msim._core.check_options("implicit_euler", solver=solver, acceleration=acceleration)
    sim = resting_cloth()
    steps = sim.steps
    with pytest.raises(ValueError, match=message):
        sim.step(H, "implicit_euler", solver=solver, acceleration=acceleration)
    assert sim.steps == steps


def test_the_constructor_takes_a_keyword_per_row_of_the_parameter_table():
    # the binding's constructor reads its keywords from the engine's table of model parameters
    vertices, edges = [[0.0, 0, 0], [1, 0, 0]], [[0, 1]]
    built = msim.System(vertices, edges)
    values = {name: getattr(built, name) for name in msim._core.model_parameters()}
    again = msim.System(vertices, edges, **values)
    for name, value in values.items():
        np.testing.assert_array_equal(getattr(again, name), value, err_msg=name)
    with pytest.raises(TypeError, match="'masses' is an invalid keyword argument for System()"):
        msim.System([[0.0, 0, 0]], np.zeros((0, 2), int), masses=1.0)
