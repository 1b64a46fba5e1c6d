"""Sphinx configuration of msim's documentation site.

Generated at build time (not committed): gallery/ holds copies of notebooks/*.ipynb, which
myst-nb executes (cached in _build/.jupyter_cache, so a rebuild reruns only the notebooks that
changed); _generated/options.md is the options table made from `msim.METHODS`;
_static/viewer/*.html are standalone exports of `msim.view`, embedded in the viewer guide.
"""

import shutil
import sys
from pathlib import Path

import msim

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import write_options, write_viewer_examples  # noqa: E402

project = "msim"
author = "the msim developers"
release = version = msim.__version__

# MathJax ships inside sphinx-mathjax-offline: the site loads nothing from a CDN
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.mathjax", "sphinx-mathjax-offline"]
myst_enable_extensions = ["dollarmath", "amsmath"]
exclude_patterns = ["_build", "_generated", "**.ipynb_checkpoints"]
myst_heading_anchors = 3
# internal references must resolve (-n); NumPy's and the standard library's classes in type
# hints cannot without intersphinx, which would fetch their inventories from the network
# (StepInfo's dataclass signature shows `timings: dict[str, float]`, which Sphinx splits
# at the comma into a "dict[str" class); msim._core.System, the C base of msim.System, names
# the system in the hints of modules that need no more of it (msim.io)
nitpick_ignore_regex = [("py:class", r"(numpy|np|pathlib|concurrent\.futures)\..*"),
                        ("py:class", r"dict\[str"), ("py:class", r"msim\._core\.System")]
html_theme = "furo"
html_title = f"msim {release}"
html_static_path = ["_static"]
html_css_files = ["msim.css"]

# the notebooks, executed as a gallery: an error in a cell fails the build
nb_execution_mode = "cache"
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_in_temp = True
# Jupyter widgets (msim.view) need a running kernel or CDN scripts; the site loads nothing
# from a CDN, so a view shows its text (the viewer guide embeds standalone exports instead)
nb_ipywidgets_js = {}
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.jupyter.widget-state+json", None),
]

# docstrings are plain text with ASCII formulas (x += h v, k uu^T): shown as written
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# the C core's docstrings start with "name(args) -> what it returns" in words: keep it as text
autodoc_docstring_signature = False


def _docstring_as_written(app, what, name, obj, options, lines):
    # msim.css wraps these blocks where a line is wider than the column, instead of clipping
    # it behind a horizontal scroll bar
    if lines:
        lines[:] = ([".. code-block:: text", "   :class: msim-docstring", ""]
                    + ["    " + line for line in lines] + [""])


def _generate(app):
    gallery = HERE / "gallery"
    gallery.mkdir(exist_ok=True)
    for notebook in sorted((HERE.parent / "notebooks").glob("*.ipynb")):
        target = gallery / notebook.name
        if not target.exists() or target.read_bytes() != notebook.read_bytes():
            shutil.copyfile(notebook, target)
    write_options(HERE / "_generated" / "options.md")
    write_viewer_examples(HERE / "_static" / "viewer")


def setup(app):
    app.connect("builder-inited", _generate)
    app.connect("autodoc-process-docstring", _docstring_as_written)
