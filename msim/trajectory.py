"""`Trajectory`: the frames a run recorded, the mesh and colliders it ran with, and its file.

`Trajectory.save(path)` writes an .npz (a zip of .npy arrays, no pickle) to exactly `path`;
`Trajectory.load(path)` reads it back bit for bit, whatever the file is called. A file that is
not a whole, consistent Trajectory raises `TrajectoryFileError` (a ValueError) naming the file
and what is wrong with it: load checks the zip's declared sizes and every array's .npy header
(dtype and shape) before it reads any data, so a file cannot make it allocate more than the
shapes it declares justify (and at most 64 times its own size plus 16 MiB), never unpickles,
and checks every value (finite numbers, indices in range, a known method) before it returns.
"""

from __future__ import annotations

import io
import json
import math
import numbers
import os
from pathlib import Path
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._files import TrajectoryFileError, inflation_limit
from .methods import METHODS

# the tag save writes into its .npz; load reads both (version 1 has no mesh or colliders)
FORMAT = "msim.Trajectory 2"
FORMATS = ("msim.Trajectory 1", FORMAT)

# the most bytes the JSON header of a file may take, and the most members its zip may hold
META_LIMIT = 2**20
MEMBER_LIMIT = 256


@dataclass(eq=False, repr=False)
class Trajectory:
    """Recorded frames of `System.simulate`.

    positions (frames, n, 3) [m]; times (frames,) [s]; energies: name -> (frames,) [J] (the
    terms of System.energy(), and with a before_step script "work", the cumulative work the
    script did on the system); seconds and iterations (steps,) per step taken; diverged: index
    of the step that diverged when simulate stopped early (on_divergence="stop"), else None;
    options: the method's options as given; velocities (frames, n, 3) [m/s] (None when built
    without them).

    The scene it ran in, so that a saved run draws and exports without the System: edges
    (m,2) the springs, faces (f,3) triangles to draw (None unless set), planes (k,4) rows of
    unit normal and offset, spheres (k,4) rows of centre and radius [m]; planes and spheres
    are (frames, k, 4), one set per frame, when a before_step script moved them during the
    run. None where unknown.

    save(path) / Trajectory.load(path): an .npz file, bit-exact.

    tape: what `System.simulate(..., adjoint=True)` kept for `backward` (an msim.adjoint.Tape:
    the state before every step), None otherwise; save does not write it.
    """

    method: str
    dt: float
    positions: np.ndarray
    times: np.ndarray
    energies: dict[str, np.ndarray]
    seconds: np.ndarray
    iterations: np.ndarray
    diverged: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    velocities: np.ndarray | None = None
    edges: np.ndarray | None = None
    faces: np.ndarray | None = None
    planes: np.ndarray | None = None
    spheres: np.ndarray | None = None
    tape: Any = field(default=None, repr=False)

    def backward(self, positions: np.ndarray | None = None,
                 velocities: np.ndarray | None = None) -> Any:
        """The msim.adjoint.Gradient of a loss L of this run's frames: positions = dL/dX and
        velocities = dL/dV, each (frames, n, 3) like this Trajectory's (None: zeros, where L
        does not look at them). Needs a run of System.simulate(..., adjoint=True)."""
        if self.tape is None:
            raise ValueError("backward: this Trajectory keeps no record of its steps: run "
                             "System.simulate(..., adjoint=True)")
        return self.tape.backward(positions, velocities, frames=len(self.positions))

    def save(self, path: str | Path) -> None:
        """Write every field to exactly `path` (an .npz whatever its name, no pickle);
        Trajectory.load reads it back bit-exactly. Everything is checked before the file is
        opened: a ValueError or TypeError names the field that is wrong."""
        save_trajectory(self, path)

    @classmethod
    def load(cls, path: str | Path) -> Trajectory:
        """Read a Trajectory written by `save`; TrajectoryFileError (a ValueError) names the
        file and what is wrong when it is not one. OSError when it cannot be opened."""
        return load_trajectory(path)

    def __repr__(self) -> str:
        frames, n = (self.positions.shape[:2] if np.ndim(self.positions) == 3
                     else (len(self.positions), 0))
        parts = [f"{self.method!r}", f"dt={self.dt:g} s", f"{frames} frames",
                 f"{n} vertices"]
        if len(self.times):
            parts.append(f"t={float(self.times[0]):g}..{float(self.times[-1]):g} s")
        total = self.energies.get("total")
        if total is not None and len(total):
            parts.append(f"total energy {float(total[0]):.6g} -> {float(total[-1]):.6g} J")
        parts.append("finished" if self.diverged is None
                     else f"diverged at step {self.diverged}")
        return f"Trajectory({', '.join(parts)})"


# ---------------------------------------------------------------- what a Trajectory holds

# array fields: (dtype kinds, shape in named dimensions); "k" and "k'" are free
FLOATS, INTEGERS = "f", "iu"
ARRAYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "positions": (FLOATS, ("frames", "n", 3)),
    "times": (FLOATS, ("frames",)),
    "seconds": (FLOATS, ("steps",)),
    "iterations": (INTEGERS, ("steps",)),
    "velocities": (FLOATS, ("frames", "n", 3)),
    "edges": (INTEGERS, ("m", 2)),
    "faces": (INTEGERS, ("f", 3)),
}
OPTIONAL = ("velocities", "edges", "faces", "planes", "spheres")
COLLIDERS = ("planes", "spheres")
ENERGY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def _layout(shapes: dict[str, tuple[tuple[int, ...], np.dtype]], energies: list[str]) -> None:
    """Check the dtypes and shapes of a Trajectory's arrays against each other, from
    {name: (shape, dtype)} (energy arrays named "energy_<term>"); ValueError saying what is
    wrong. Needs no data: load runs it on the .npy headers before reading any."""
    sizes: dict[str, int] = {}

    def check(name: str, kinds: str, dims: tuple) -> None:
        shape, dtype = shapes[name]
        if dtype.kind not in kinds or dtype.fields is not None or dtype.hasobject:
            what = "floating-point" if kinds == FLOATS else "integer"
            raise ValueError(f"{name}: expected {what} numbers, got dtype {dtype}")
        expected_shape = "(" + ", ".join(map(str, dims)) + (",)" if len(dims) == 1 else ")")
        if len(shape) != len(dims):
            raise ValueError(f"{name}: expected shape {expected_shape}, got {shape}")
        for dim, size in zip(dims, shape):
            expected = sizes.setdefault(dim, size) if isinstance(dim, str) else dim
            if size != expected:
                raise ValueError(f"{name}: expected shape {expected_shape} with {dim} = "
                                 f"{expected}, got {shape}")

    for name in ("positions", "times", "seconds", "iterations"):
        if name not in shapes:
            raise ValueError(f"{name}: missing")
        check(name, *ARRAYS[name])
    if sizes["frames"] < 1:
        raise ValueError("positions: expected at least one frame (the start state), got 0")
    if sizes["frames"] - 1 > sizes["steps"]:
        raise ValueError(f"positions: expected at most steps + 1 = {sizes['steps'] + 1} "
                         f"frames (one per recorded step), got {sizes['frames']}")
    for term in energies:
        check(f"energy_{term}", FLOATS, ("frames",))
    for name in ("velocities", "edges", "faces"):
        if name in shapes:
            check(name, *ARRAYS[name])
    for name in COLLIDERS:
        if name in shapes:
            per_frame = len(shapes[name][0]) == 3
            check(name, FLOATS, ("frames", name, 4) if per_frame else (name, 4))


def _values(arrays: dict[str, np.ndarray]) -> None:
    """Check the values of arrays whose layout `_layout` accepted; ValueError saying what is
    wrong: non-finite numbers, vertex indices out of range, negative counts or steps, times
    that go back, degenerate colliders."""
    for name, a in arrays.items():
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            where = np.argwhere(~np.isfinite(a))[0]
            raise ValueError(f"{name}: expected finite numbers, got {a[tuple(where)]} at "
                             f"index {tuple(int(i) for i in where)}")
    n = arrays["positions"].shape[1]
    for name in ("edges", "faces"):
        if name in arrays and arrays[name].size:
            a = arrays[name]
            if a.min() < 0 or a.max() >= n:
                bad = a.min() if a.min() < 0 else a.max()
                raise ValueError(f"{name}: expected vertex indices in [0, {n}), got {bad}")
    for name in ("seconds", "iterations"):
        if arrays[name].size and arrays[name].min() < 0:
            raise ValueError(f"{name}: expected values >= 0, got {arrays[name].min()}")
    if np.any(np.diff(arrays["times"]) < 0):
        raise ValueError("times: expected non-decreasing times [s], got a frame earlier than "
                         f"the one before it at index {int(np.argmax(np.diff(arrays['times']) < 0)) + 1}")
    if "planes" in arrays and arrays["planes"].size:
        if not np.linalg.norm(arrays["planes"][..., :3], axis=-1).min() > 0:
            raise ValueError("planes: expected rows of a normal and an offset, got a zero "
                             "normal")
    if "spheres" in arrays and arrays["spheres"].size and arrays["spheres"][..., 3].min() <= 0:
        raise ValueError(f"spheres: expected radii > 0 [m], got {arrays['spheres'][..., 3].min()}")


def _meta(meta: Any) -> dict[str, Any]:
    """Check the JSON header of a file (or of a Trajectory about to be saved); ValueError
    or TypeError saying what is wrong."""
    if not isinstance(meta, dict):
        raise ValueError(f"header: expected a JSON object, got {type(meta).__name__}")
    missing = {"format", "method", "dt", "diverged", "options", "energies"} - set(meta)
    if missing:
        raise ValueError(f"header: missing {sorted(missing)}")
    if meta["format"] not in FORMATS:
        raise ValueError(f"format: expected one of {list(FORMATS)}, got {meta['format']!r}")
    method = meta["method"]
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method: expected one of {sorted(METHODS)}, got {method!r}")
    dt = meta["dt"]
    if (isinstance(dt, bool) or not isinstance(dt, (int, float)) or not math.isfinite(dt)
            or dt <= 0):
        raise ValueError(f"dt: expected a finite step > 0 [s], got {dt!r}")
    diverged = meta["diverged"]
    if diverged is not None and (isinstance(diverged, bool) or not isinstance(diverged, int)
                                 or diverged < 0):
        raise ValueError(f"diverged: expected None or a step index >= 0, got {diverged!r}")
    options = meta["options"]
    if not isinstance(options, dict):
        raise ValueError(f"options: expected a dict, got {type(options).__name__}")
    for key, value in options.items():
        if not isinstance(value, (bool, int, float, str, type(None))):
            raise TypeError(f"options[{key!r}]: expected a number, string, bool or None, got "
                            f"{type(value).__name__}")
    energies = meta["energies"]
    if (not isinstance(energies, list) or len(set(map(str, energies))) != len(energies)
            or not all(isinstance(e, str) and ENERGY_NAME.fullmatch(e) for e in energies)):
        raise ValueError(f"energies: expected a list of distinct names (letters, digits, _), "
                         f"got {energies!r}")
    return meta


# ---------------------------------------------------------------- save


def save_trajectory(traj: Trajectory, path: str | Path) -> None:
    """Write `traj` to exactly `path` as an .npz: its arrays as they are, the rest (method,
    dt, diverged, options, the order of the energy terms) as JSON, which keeps floats exact.

    Options must be numbers, strings, bools or None (NumPy scalars are saved as Python ones).
    The Trajectory is checked as load checks a file before anything is written.
    """
    options = {key: value.item() if isinstance(value, np.generic) else value
               for key, value in traj.options.items()}
    meta = _meta({"format": FORMAT, "method": traj.method, "dt": _number(traj.dt),
                  "diverged": _number(traj.diverged), "options": options,
                  "energies": list(traj.energies)})
    arrays = {name: np.asarray(getattr(traj, name)) for name in ARRAYS if name not in OPTIONAL}
    arrays.update({f"energy_{name}": np.asarray(values)
                   for name, values in traj.energies.items()})
    arrays.update({name: np.asarray(getattr(traj, name)) for name in OPTIONAL
                   if getattr(traj, name) is not None})
    _layout({name: (a.shape, a.dtype) for name, a in arrays.items()}, meta["energies"])
    _values(arrays)
    with open(path, "wb") as f:  # a file object: np.savez adds no ".npz" to its name
        np.savez(f, meta=np.array(json.dumps(meta)), **arrays)


def _number(value: Any) -> Any:
    """A NumPy integer as a Python int, a real number as a Python float (JSON writes those
    exactly); anything else as it is, for `_meta` to refuse."""
    if isinstance(value, (bool, np.bool_)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value) if isinstance(value, numbers.Real) else value


# ---------------------------------------------------------------- load


def load_trajectory(path: str | Path) -> Trajectory:
    """Read a Trajectory written by `save_trajectory` (Trajectory.save); TrajectoryFileError
    naming the file and the problem when it is not a whole, consistent one."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        try:
            return _read(f, size)
        except TrajectoryFileError:
            raise
        except (ValueError, TypeError) as error:
            raise TrajectoryFileError(path, str(error)) from None
        except Exception as error:  # whatever a corrupt zip or .npy makes the libraries raise
            raise TrajectoryFileError(
                path, f"not a readable Trajectory file ({type(error).__name__}: {error})") from None


def _read(f: io.BufferedReader, size: int) -> Trajectory:
    """The Trajectory in the open file `f` of `size` bytes (ValueError on what is wrong)."""
    try:
        archive = zipfile.ZipFile(f)
    except zipfile.BadZipFile as error:
        raise ValueError(f"expected an .npz (zip) file written by Trajectory.save: {error}") from None
    infos = archive.infolist()
    names = [info.filename for info in infos]
    if len(infos) > MEMBER_LIMIT:
        raise ValueError(f"expected at most {MEMBER_LIMIT} arrays, got {len(names)}")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"holds {twice} more than once")
    if not all(name.endswith(".npy") for name in names):
        raise ValueError(f"expected .npy members only, got {sorted(names)}")
    declared = sum(info.file_size for info in infos)
    if declared > inflation_limit(size):
        raise ValueError(f"its members declare {declared} bytes, more than "
                         f"{inflation_limit(size)} for a file of {size} bytes (a zip bomb?)")
    headers = {info.filename[:-4]: _header(archive, info) for info in infos}
    if "meta" not in headers:
        raise ValueError(f"expected an .npz written by Trajectory.save (with a 'meta' "
                         f"header), got arrays {sorted(headers)}")
    shape, dtype = headers.pop("meta")
    if shape != () or dtype.kind != "U" or dtype.itemsize > META_LIMIT:
        raise ValueError(f"meta: expected one JSON string of at most {META_LIMIT} bytes, got "
                         f"shape {shape} dtype {dtype}")
    try:
        meta = _meta(json.loads(str(_array(archive, "meta"))))
    except RecursionError:
        raise ValueError("meta: JSON nested too deeply") from None
    energies = meta["energies"]
    known = set(ARRAYS) | {"planes", "spheres"} | {f"energy_{e}" for e in energies}
    if set(headers) - known or any(f"energy_{e}" not in headers for e in energies):
        raise ValueError(f"expected arrays {sorted(known)}, got {sorted(headers)}")
    _layout(headers, energies)
    arrays = {name: _array(archive, name) for name in headers}
    _values(arrays)
    return Trajectory(
        method=meta["method"], dt=float(meta["dt"]), positions=arrays["positions"],
        times=arrays["times"], energies={e: arrays[f"energy_{e}"] for e in energies},
        seconds=arrays["seconds"], iterations=arrays["iterations"],
        diverged=meta["diverged"], options=meta["options"],
        **{name: arrays.get(name) for name in OPTIONAL})


def _header(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) from the .npy header of one member, checked against the member's
    declared size, without reading its data."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        read = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError(f"{info.filename}: unsupported .npy version {version}")
        shape, _, dtype = read(member)
        offset = member.tell()
    if dtype.hasobject:
        raise ValueError(f"{info.filename}: holds Python objects (dtype {dtype}); "
                         "Trajectory files never do, and load never unpickles")
    nbytes = math.prod(shape) * dtype.itemsize
    if offset + nbytes != info.file_size:
        raise ValueError(f"{info.filename}: its header declares {nbytes} bytes of {dtype} "
                         f"{shape}, but the member holds {info.file_size - offset}")
    return shape, dtype


def _array(archive: zipfile.ZipFile, name: str) -> np.ndarray:
    """The array of member `name`.npy (its header already checked)."""
    with archive.open(f"{name}.npy") as member:
        return np.lib.format.read_array(member, allow_pickle=False)
