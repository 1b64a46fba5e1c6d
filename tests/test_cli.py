"""python -m msim: demo and compare write what they say."""

import pytest
from PIL import Image

from msim.__main__ import compare_cli, main


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


def test_compare_by_default_shows_a_cloth_falling_for_a_few_seconds(tmp_path, capsys):
    fig = compare_cli(["symplectic_euler", "fms"], None, None, 3.0, 8, tmp_path)
    rows = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines()
            if line.startswith("| symplectic_euler") or line.startswith("| fms")]
    # each method at its own step for 3 s: 3000 steps of 1 ms, 90 of 1/30 s
    assert [(r[0].strip(), int(r[3])) for r in rows] == [("symplectic_euler", 3000), ("fms", 90)]
    ax = fig.axes[0]
    assert ax.get_title() == "8x8 cloth released from horizontal: total energy"
    assert len(ax.get_lines()) == 2 and ax.get_xlim()[1] >= 3.0
    # FMS (implicit Euler's damping) loses energy the symplectic run keeps
    drift = {r[0].strip(): float(r[6]) for r in rows}
    assert drift["fms"] < -0.5 and abs(drift["symplectic_euler"]) < 0.1 * abs(drift["fms"])


@pytest.mark.parametrize("command", ["demo", "compare"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0 and "usage" in capsys.readouterr().out
