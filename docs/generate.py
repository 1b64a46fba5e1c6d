"""Pages and files the docs build makes from the installed msim (run by conf.py).

write_options: the table of every method's options, from `msim.METHODS` (the one place the
options are defined), so the site never disagrees with what `System.step` accepts.
write_viewer_examples: standalone HTML exports of `msim.view`, embedded in the viewer guide.
"""

from __future__ import annotations

from pathlib import Path

import msim


def _kind(spec) -> str:
    """An option's accepted choices, or its type and the range the core accepts where the
    table states one (`low`, `high`)."""
    if isinstance(spec.kind, tuple):
        return " / ".join(f"`{choice!r}`" for choice in spec.kind)
    low, high = getattr(spec, "low", None), getattr(spec, "high", None)
    if spec.kind is bool or low is None or high is None:
        return f"`{spec.kind.__name__}`"
    bound = (lambda v: f"{int(v)}") if spec.kind is int else (lambda v: f"{v:g}")
    return f"`{spec.kind.__name__}` in [{bound(low)}, {bound(high)}]"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_options(path: Path) -> None:
    """A Markdown section per method: its summary and a table of option, default, accepted
    values and meaning."""
    lines = []
    for method, options in msim.METHODS.items():
        lines += [f"### `{method}`", "", _cell(msim.SUMMARY.get(method, "")), ""]
        if not options:
            lines += ["No options.", ""]
            continue
        lines += ["| option | default | accepts | meaning |", "|---|---|---|---|"]
        lines += [f"| `{name}` | `{spec.default!r}` | {_kind(spec)} | {_cell(spec.doc)} |"
                  for name, spec in options.items()]
        lines.append("")
    _write_if_changed(path, "\n".join(lines))


def write_viewer_examples(folder: Path) -> None:
    """Two standalone views: a cloth dropped on a sphere coloured by strain, and the curtain
    of Liu et al. 2013 (81 x 81 = 6561 vertices) swinging for two seconds."""
    folder.mkdir(parents=True, exist_ok=True)
    drape = folder / "cloth_on_sphere.html"
    if not drape.exists():
        scene = msim.scenes.cloth_on_sphere(n=30)
        traj = scene.run(60, "implicit_euler")
        view = msim.view(traj, scene.faces, system=scene.system, color="strain",
                         color_range=(-0.1, 0.1))
        view.show(len(traj.times) - 1)  # opens draped; play starts it from the top
        view.save_html(drape)
    curtain = folder / "curtain.html"
    if not curtain.exists():
        scene = msim.scenes.curtain()
        traj = scene.run(60, "fms")
        view = msim.view(traj, scene.faces, system=scene.system)
        view.show(len(traj.times) // 4)  # opens mid-swing
        view.save_html(curtain)


def _write_if_changed(path: Path, text: str) -> None:
    """Write text to path unless it already holds it (so Sphinx does not rebuild pages)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
