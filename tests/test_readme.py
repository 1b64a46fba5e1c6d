"""The README's Python snippets run as written: the contact snippet's cloth starts outside the
sphere and ends draped on it, the self-contact snippet's fold never crosses itself, and the
gradient snippet's gradient matches central differences of the same runs."""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import msim

README = Path(__file__).resolve().parent.parent / "README.md"


def _snippets() -> dict[str, str]:
    """The Python blocks of the README by the title of the section they are in."""
    text, blocks, section = README.read_text(), {}, ""
    for part in re.split(r"(^## .*$)", text, flags=re.M):
        if part.startswith("## "):
            section = part[3:].strip()
        for code in re.findall(r"```python\n(.*?)```", part, flags=re.S):
            blocks[section] = blocks.get(section, "") + code
    return blocks


def test_quick_start_and_contact_snippets_run_and_the_cloth_drapes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the snippets write PNGs and run.npz
    blocks = _snippets()
    env: dict = {}
    exec(blocks["Quick start"], env)
    contact = blocks["Contact"]
    build, run = contact.split("traj = ", 1)
    exec(build, env)
    sim = env["sim"]
    x0 = sim.positions
    centre, radius = sim.spheres[0, :3], sim.spheres[0, 3]
    contact_radius = sim.contact_scale * radius
    # every vertex starts outside the sphere's contact radius and above the ground
    assert np.linalg.norm(x0 - centre, axis=1).min() > contact_radius + 0.1
    assert x0[:, 1].min() > 0.0
    exec("traj = " + run, env)
    x = env["traj"].positions[-1]
    # after 1.5 s it rests on the sphere: no vertex deep inside it, the middle on top of it
    assert np.linalg.norm(x - centre, axis=1).min() > radius
    middle = np.argmin(np.linalg.norm(x0[:, [0, 2]] - centre[[0, 2]], axis=1))
    assert abs(x[middle, 1] - (centre[1] + contact_radius)) < 0.02
    assert (tmp_path / "run.npz").exists() and (tmp_path / "frame.png").exists()


def test_the_method_table_is_the_one_msim_builds_from_the_core_table():
    # regenerate with: python -c "import msim.methods as m; print(m.readme_table(), end='')"
    from msim.methods import readme_table

    text = README.read_text()
    start = text.index("| method | what it does | options (defaults) |")
    assert text[start:text.index("\n\n", start) + 1] == readme_table()


def test_self_contact_snippet_keeps_the_fold_apart():
    env: dict = {}
    exec("import msim\n" + _snippets()["Self-contact"], env)
    assert env["sim"].self_intersections() == 0
    assert env["info"].self_contact["pairs"] > 0  # the layers touch: the test tests something


def test_gradient_snippet_matches_central_differences():
    env: dict = {}
    exec("import msim\n" + _snippets()["Gradients"], env)
    rope, grad, k = env["rope"], env["grad"], env["sim"].stiffness

    def end_height(stiffness):
        sim = msim.System(rope.vertices, rope.edges, fixed=[0], mass=0.01, stiffness=stiffness)
        traj = sim.simulate(30, 1 / 60, "implicit_euler", tol=1e-9, iterations=50)
        return traj.positions[-1, -1, 1]

    direction, eps = np.random.default_rng(0).standard_normal(k.size), 1e-3
    fd = (end_height(k + eps * direction) - end_height(k - eps * direction)) / (2 * eps)
    assert grad.stiffness @ direction == pytest.approx(fd, rel=1e-6)
