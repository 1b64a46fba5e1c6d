"""The notebooks run as a student runs them, and each matches the jupytext script it is made from.

Jupyter starts a notebook's kernel in the notebook's folder, with only what is installed
importable: each notebook is copied alone into a scratch folder and executed there, with no
PYTHON* variable in the kernel's environment. The kernel asserts that none is set, that no entry
of its sys.path lies in the repository (but for an environment installed there), that msim is the installed distribution and that it is
imported from where pip installed it, so an import of something outside the installed package
(the repository's benchmarks/, tests/) fails here as it would for a student.
"""

import os
import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL_CHECK = """\
import importlib.util, os, pathlib, sys
assert os.getcwd() == {folder!r}, os.getcwd()
assert not [k for k in os.environ if k.startswith("PYTHON")], os.environ
inside = [p for p in sys.path if p and pathlib.Path(p).resolve().is_relative_to({root!r})
          and not pathlib.Path(p).resolve().is_relative_to(pathlib.Path(sys.prefix).resolve())]
assert not inside, inside  # no folder of the repository, but the environment installed in it
assert importlib.util.find_spec("benchmarks") is None and importlib.util.find_spec("builders") is None
assert importlib.util.find_spec("msim") is not None
import importlib.metadata, json, pathlib, urllib.parse, urllib.request, msim
assert importlib.metadata.version("msim") == msim.__version__  # the installed distribution
# imported from where pip put it: the editable install's recorded source, or site-packages
dist = importlib.metadata.distribution("msim")
url = json.loads(dist.read_text("direct_url.json") or "{{}}")
home = (pathlib.Path(urllib.request.url2pathname(urllib.parse.urlparse(url["url"]).path))
        if url.get("dir_info", {{}}).get("editable") else pathlib.Path(dist.locate_file("")))
assert pathlib.Path(msim.__file__).resolve().is_relative_to(home.resolve()), (msim.__file__, home)
"""


def test_notebooks_exist():
    assert [p.name for p in NOTEBOOKS][:1] == ["01_quickstart.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_matches_its_jupytext_script(path):
    jupytext = pytest.importorskip("jupytext")
    script = path.with_suffix(".py")
    assert script.exists(), f"{path.name} has no jupytext script {script.name}"
    made = jupytext.read(script)
    committed = nbformat.read(path, as_version=4)
    assert ([(c.cell_type, c.source) for c in committed.cells]
            == [(c.cell_type, c.source) for c in made.cells]), \
        f"{path.name} differs from {script.name}: run `jupytext --sync {script.relative_to(ROOT)}`"
    assert all(not c.get("outputs") for c in committed.cells if c.cell_type == "code"), \
        f"{path.name} is committed with outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_alone_in_its_folder(path, tmp_path, monkeypatch):
    for name in [k for k in os.environ if k.startswith("PYTHON")]:  # none reaches the kernel
        monkeypatch.delenv(name)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    folder = tmp_path / "notebooks"
    folder.mkdir()
    copy = Path(shutil.copy(path, folder))
    nb = nbformat.read(copy, as_version=4)
    # after the notebook, its kernel proves where it ran: in the notebook's folder, msim from
    # the installed package, and nothing of the repository (benchmarks/, tests/) importable
    nb.cells.append(nbformat.v4.new_code_cell(KERNEL_CHECK.format(folder=str(folder),
                                                                  root=str(ROOT))))
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                                     resources={"metadata": {"path": str(folder)}})
    client.execute()
