"""Scenes build and run in every method; the moving sphere follows its script."""

import numpy as np
import pytest

import msim
from msim import scenes

SMALL = {  # each scene at a size that keeps the test fast
    "hanging_cloth": dict(n=8),
    "cloth_on_sphere": dict(n=8),
    "curtain": dict(n=9),
    "jelly_cube": dict(n=3),
    "rope_pendulum": dict(n=10),
    "pushed_cloth": dict(n=8),
}


def test_every_scene_is_listed():
    assert set(scenes.SCENES) == set(SMALL)


@pytest.mark.parametrize("method", sorted(msim.METHODS))
@pytest.mark.parametrize("name", sorted(SMALL))
def test_scene_runs_a_few_steps(name, method):
    scene = scenes.SCENES[name](**SMALL[name])
    assert isinstance(scene.system, msim.System) and scene.faces.shape[1:] in ((3,), ())
    explicit = method in ("explicit_euler", "symplectic_euler")
    traj = scene.run(5, method, dt=1e-4 if explicit else None, record_every=5)
    assert traj.positions.shape == (2, scene.system.n_vertices, 3)
    assert np.all(np.isfinite(traj.positions))
    assert not np.array_equal(traj.positions[0], traj.positions[-1])


def test_pushed_cloth_moves_its_sphere_with_time():
    scene = scenes.pushed_cloth(n=8, speed=0.5)
    scene.run(6, "fms")
    # the script ran before each step: at the last one the clock read 5 dt
    assert scene.system.spheres[0, 2] == pytest.approx(-0.3 + 0.5 * 5 / 30)


def test_jelly_cube_rests_on_the_ground():
    scene = scenes.jelly_cube(n=3)
    traj = scene.run(60, "implicit_euler")
    lowest = traj.positions[:, :, 1].min(axis=1)
    assert lowest[-1] > -1e-3 and lowest[-1] < 0.05  # landed, not sunk
    # at rest the ground's penalty carries the whole weight: k_c sum(depth) = M g
    sim = scene.system
    depth = np.maximum(-traj.positions[-1, :, 1], 0.0).sum()
    weight = sim.mass.sum() * -sim.gravity[1]
    assert sim.contact_stiffness * depth == pytest.approx(weight, rel=1e-4)
