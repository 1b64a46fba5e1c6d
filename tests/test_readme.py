"""The README's Python snippets run as written, and the contact snippet's cloth starts outside
the sphere and ends draped on it."""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np

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
