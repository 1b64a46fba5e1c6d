"""Out of memory inside a step: the step raises MemoryError with the state as it was, and the
next step, with memory back, runs on complete workspaces and gives the answer of a System that
never ran short (bit for bit: the same arithmetic on the same state)."""

import numpy as np
import pytest

import msim
from msim import _core, scenes

# every workspace the core builds on a first step, and the CHOLMOD patterns in them
CASES = [
    ("implicit_euler", {}),
    ("linearized_implicit", {"solver": "cg"}),
    ("linearized_implicit", {"solver": "direct"}),
    ("fms", {}),
    ("fms", {"acceleration": "anderson"}),
    ("implicit_euler", {"solver": "lbfgs"}),
    ("xpbd", {}),
    ("implicit_euler", {"solver": "vbd"}),
    ("bdf2", {"solver": "vbd", "acceleration": "chebyshev", "rho": 0.9}),
]


def _cloth() -> msim.System:
    mesh = msim.mesh.cloth_grid(6, 6)
    return msim.System(mesh.vertices, mesh.edges, stiffness=100.0, fixed=[0, 5])


def _two_steps(sim: msim.System, method: str, options: dict) -> None:
    for _ in range(2):
        sim.step(1 / 30, method, **options)


def _swinging_cloth() -> msim.System:
    """A cloth with self-contact whose far side swings at up to 3 m/s: its first step moves
    vertices beyond the bounds' reach, so the step's end is swept (hash, patches, their pairs)."""
    mesh = msim.mesh.cloth_grid(6, 6)
    sim = msim.System(mesh.vertices, mesh.edges, stiffness=100.0, fixed=[0, 5],
                      faces=mesh.faces, self_contact=True)
    v = np.zeros((sim.n_vertices, 3))
    v[:, 1] = 3.0 * mesh.vertices[:, 2]
    sim.velocities = v
    return sim


def _runs_out_of_memory(make, method: str, options: dict) -> None:
    """Each allocation of the first step of make()'s System fails in turn: MemoryError, the
    state as it was, and two steps later the answer of a System that never ran short."""
    expected = make()
    _two_steps(expected, method, options)
    failures = 0
    for k in range(1, 400):  # the k-th allocation of the first step fails
        sim = make()
        before = sim.positions
        _core._fail_allocation(k)
        try:
            sim.step(1 / 30, method, **options)
        except MemoryError:
            failures += 1
            np.testing.assert_array_equal(sim.positions, before)
            assert sim.steps == 0
        else:
            break  # the first step needs fewer than k allocations
        finally:
            _core._fail_allocation(0)
        _two_steps(sim, method, options)
        np.testing.assert_array_equal(sim.positions, expected.positions)
        np.testing.assert_array_equal(sim.velocities, expected.velocities)
    else:
        pytest.fail("the first step kept allocating past 400 allocations")
    assert failures >= 2  # the workspace and at least one of its arrays were hit


@pytest.mark.parametrize("method, options", CASES, ids=lambda c: str(c))
def test_a_step_that_ran_out_of_memory_leaves_nothing_half_built(method, options):
    _runs_out_of_memory(_cloth, method, options)


@pytest.mark.parametrize("method", ["fms", "implicit_euler", "xpbd"])
def test_a_self_contact_step_that_ran_out_of_memory_leaves_nothing_half_built(method):
    _runs_out_of_memory(_swinging_cloth, method, {})


def test_a_ring_change_that_ran_out_of_memory_leaves_the_mesh_as_it_was():
    # a new ring depth derives the triangles' edges and the rings again: an allocation that
    # fails on the way raises MemoryError and leaves the depth and the edges as they were, so
    # detection finds the pairs it found before (a failure that had dropped the edges first
    # left a mesh whose edge-edge pairs nobody found)
    want = scenes.folded_cloth(n=6).initial._detected_pairs(False)[0]
    assert len(want) > 100
    failures = 0
    for k in range(1, 100):
        sim = scenes.folded_cloth(n=6).initial.copy()
        _core._fail_allocation(k)
        try:
            sim.self_contact_ring = 3
        except MemoryError:
            failures += 1
            assert sim.self_contact_ring == 2
            np.testing.assert_array_equal(sim._detected_pairs(False)[0], want)
        else:
            break
        finally:
            _core._fail_allocation(0)
    assert failures >= 3


def test_the_hook_names_its_argument():
    with pytest.raises(ValueError, match=r"k: expected an integer in \[0, "):
        _core._fail_allocation(-1)
