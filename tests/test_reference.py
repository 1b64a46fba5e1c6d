"""msim.reference ships with msim behind the `reference` extra and says so when SciPy is absent."""

import subprocess
import sys


def test_without_scipy_the_import_error_names_the_extra(tmp_path):
    # a stand-in scipy package that fails to import, first on the path of a fresh interpreter
    (tmp_path / "scipy").mkdir()
    (tmp_path / "scipy" / "__init__.py").write_text("raise ImportError('no scipy here')\n")
    code = ("import msim\n"
            "try:\n"
            "    import msim.reference\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, env={"PYTHONPATH": str(tmp_path)}, check=True).stdout
    assert "pip install msim[reference]" in out


def test_the_oracles_import_from_the_installed_package_alone(tmp_path):
    # from a folder outside the repository, with no PYTHONPATH
    code = "from msim.reference import core, explicit, fms, implicit; print(fms.newton.__name__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, env={}, check=True).stdout
    assert out.strip() == "newton"
