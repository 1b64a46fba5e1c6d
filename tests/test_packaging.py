"""The package's version is written once (msim.__version__, which pyproject.toml reads), and
the package ships py.typed so type checkers use its annotations."""

import importlib.metadata
from pathlib import Path

from setuptools.config.pyprojecttoml import read_configuration

import msim

ROOT = Path(__file__).resolve().parent.parent


def test_the_build_and_the_installed_metadata_take_the_version_from_the_package():
    config = read_configuration(ROOT / "pyproject.toml", expand=True)["project"]
    assert config["version"] == msim.__version__
    assert importlib.metadata.version("msim") == msim.__version__


def test_py_typed_ships_with_the_package():
    config = read_configuration(ROOT / "pyproject.toml", expand=True)
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["msim"]
    assert (Path(msim.__file__).parent / "py.typed").is_file()
