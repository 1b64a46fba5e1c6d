"""Write the notebooks in notebooks/ from the cell sources below (no outputs).

Run `python tools/make_notebooks.py` after editing a notebook's cells here, so that the
committed notebooks stay reviewable as plain Python in one place.
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent.parent / "notebooks"


def notebook(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """A notebook from (kind, source) pairs; kind is "md" or "py"."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src)
                for kind, src in cells]
    return nb


QUICKSTART = [
    ("md", "# msim quick start\n\nBuild a cloth, step it, watch its energy, branch a state "
           "into several integrators and draw the result."),
    ("py", "%matplotlib inline\nimport numpy as np\nimport msim\nimport msim.plot\n\n"
           "mesh = msim.mesh.cloth_grid(20, 20, size=1.0)\n"
           "sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1000.0, "
           "fixed=[0, 19])\nsim"),
    ("md", "One step returns a `StepInfo`; `energy()` is in joules."),
    ("py", "info = sim.step(1e-3, method=\"symplectic_euler\")\nprint(info)\nsim.energy()"),
    ("md", "`simulate` records frames and energies; `progress=True` shows a bar."),
    ("py", "state = sim.get_state()\n"
           "traj = sim.simulate(1500, 1e-3, \"symplectic_euler\", record_every=15, "
           "progress=True)\nmsim.plot.energy(traj, terms=(\"kinetic\", \"spring\", "
           "\"gravity\", \"total\"));"),
    ("py", "msim.plot.frame(traj.positions[-1], mesh.faces, fixed=[0, 19], "
           "title=\"after 1.5 s\");"),
    ("md", "Branch the saved state into every method and compare (explicit Euler diverges "
           "at this step: that is the lesson)."),
    ("py", "sim.set_state(state)\n"
           "table = msim.compare(sim, sorted(msim.METHODS), steps=300, dt=1e-3)\ntable"),
]

NOTEBOOKS = {"01_quickstart.ipynb": QUICKSTART}

if __name__ == "__main__":
    for name, cells in NOTEBOOKS.items():
        nbformat.write(notebook(cells), HERE / name)
        print("wrote", HERE / name)
