"""python -m msim: demo and compare write what they say."""

import pytest
from PIL import Image

from msim.__main__ import main


def test_demo_prints_a_row_per_run_and_writes_two_pngs(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--seconds", "0.2"]) == 0
    out = capsys.readouterr().out
    assert out.count("| explicit_euler |") == 2 and "| fms |" in out and "| xpbd |" in out
    for name in ("energy.png", "frame.png"):
        with Image.open(tmp_path / name) as image:
            assert image.format == "PNG" and image.size[0] > 300


def test_compare_prints_a_table_and_a_plot(tmp_path, capsys):
    main(["compare", "symplectic_euler", "fms", "--steps", "20", "--size", "8",
          "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "| symplectic_euler |" in out and "| fms |" in out
    assert (tmp_path / "compare_energy.png").exists()


@pytest.mark.parametrize("command", ["demo", "compare"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0 and "usage" in capsys.readouterr().out
