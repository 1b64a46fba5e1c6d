"""Trajectory: what simulate records (frames, mesh, colliders, the work of a script), its short
repr, and its file: save writes exactly the path given, load reads it back bit for bit, and a
file that is not a whole, consistent Trajectory raises TrajectoryFileError naming the file and
the problem, without unpickling or inflating past what the file justifies."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
import re
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

import msim
from hostile import attempt


def assert_same_trajectory(a: msim.Trajectory, b: msim.Trajectory) -> None:
    """Every field equal, arrays bit for bit and of the same dtype."""
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        elif isinstance(x, dict):
            assert list(x) == list(y), f.name
            for key in x:
                np.testing.assert_array_equal(x[key], y[key], err_msg=f"{f.name}[{key}]")
                assert type(x[key]) is type(y[key]), f"{f.name}[{key}]"
        else:
            assert x == y and type(x) is type(y), f.name


@pytest.fixture(scope="module")
def pushed() -> msim.Trajectory:
    """A run whose script moves a sphere through a cloth: per-frame spheres and the work."""
    return msim.scenes.pushed_cloth(6).run(6, "fms", record_every=2, iterations=3)


def test_trajectory_saves_and_loads_bit_exactly(tmp_path, pushed):
    scene = msim.scenes.cloth_on_sphere(6)
    traj = scene.run(8, "fms", record_every=2, iterations=3, acceleration="chebyshev",
                     rho=0.9)
    assert traj.velocities.shape == traj.positions.shape
    np.testing.assert_array_equal(traj.velocities[-1], scene.system.velocities)
    traj.save(tmp_path / "run.npz")
    assert_same_trajectory(traj, msim.Trajectory.load(tmp_path / "run.npz"))
    # moving colliders and a script's work come back too
    pushed.save(tmp_path / "pushed.npz")
    assert_same_trajectory(pushed, msim.Trajectory.load(tmp_path / "pushed.npz"))
    # a run stopped by divergence keeps the step it diverged at
    sim = msim.scenes.hanging_cloth(6).system
    blown = sim.simulate(200, 0.05, "explicit_euler", on_divergence="stop")
    assert blown.diverged is not None
    blown.save(tmp_path / "blown.npz")
    assert_same_trajectory(blown, msim.Trajectory.load(tmp_path / "blown.npz"))


@pytest.mark.parametrize("name", ["run.dat", "run", "run.npz.bak", "run.NPZ"])
def test_save_writes_exactly_the_path_given_and_load_reads_it(tmp_path, name):
    traj = msim.scenes.rope_pendulum(4).run(3, "fms")
    traj.save(tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no ".npz" appended
    assert_same_trajectory(traj, msim.Trajectory.load(tmp_path / name))
    traj.save(str(tmp_path / name))  # str paths too, overwriting
    assert_same_trajectory(traj, msim.Trajectory.load(str(tmp_path / name)))


def test_files_of_the_first_format_still_load(tmp_path):
    # what msim wrote before runs kept their mesh and colliders
    traj = msim.scenes.rope_pendulum(4).run(3, "fms")
    meta, arrays = _parts(traj)
    meta["format"] = "msim.Trajectory 1"
    for name in ("edges", "planes", "spheres"):
        arrays.pop(name, None)
    _write(tmp_path / "old.npz", meta, arrays)
    old = msim.Trajectory.load(tmp_path / "old.npz")
    np.testing.assert_array_equal(old.positions, traj.positions)
    assert old.edges is None and old.planes is None and old.spheres is None


def test_simulate_records_the_springs_and_the_colliders(pushed):
    scene = msim.scenes.cloth_on_sphere(6)
    traj = scene.run(3, "fms")
    np.testing.assert_array_equal(traj.edges, scene.system.edges)
    np.testing.assert_array_equal(traj.spheres, scene.system.spheres)  # did not move: (k,4)
    np.testing.assert_array_equal(traj.planes, scene.system.planes)
    np.testing.assert_array_equal(traj.faces, scene.faces)  # the Scene's, for drawing
    assert scene.system.simulate(1, 1e-3, "fms").faces is None  # a bare System has none
    # the pushed cloth's script moves its sphere along z at 0.5 m/s before every step: each
    # frame holds it where the script put it for the frame's last step (frame 0: the start)
    assert pushed.spheres.shape == (len(pushed.times), 1, 4)
    put = -0.3 + 0.5 * np.maximum(pushed.times - pushed.dt, 0.0)
    np.testing.assert_allclose(pushed.spheres[:, 0, 2], put, rtol=0, atol=1e-15)


def test_repr_is_a_short_summary():
    traj = msim.scenes.rope_pendulum(4).run(30, "fms")
    text = repr(traj)
    e = traj.energies["total"]
    assert text.startswith("Trajectory('fms', dt=")
    for part in (f"{len(traj.times)} frames", "4 vertices", f"{e[0]:.6g} -> {e[-1]:.6g} J",
                 "finished"):
        assert part in text
    assert len(text) < 200 and "\n" not in text and "array" not in text


# ---------------------------------------------------------------- hostile files


def _parts(traj: msim.Trajectory) -> tuple[dict, dict]:
    """(meta, arrays) of the file `traj.save` writes."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.npz"
        traj.save(path)
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    return json.loads(str(arrays.pop("meta"))), arrays


def _write(path, meta, arrays) -> None:
    """A file laid out as Trajectory.save lays it out, with this meta (a dict, or JSON text)
    and these arrays."""
    with open(path, "wb") as f:
        np.savez(f, meta=np.array(meta if isinstance(meta, str) else json.dumps(meta)),
                 **arrays)


MUTATIONS = {
    "positions 2-d": (lambda m, a: a.update(positions=a["positions"][0]),
                      r"positions: expected shape \(frames, n, 3\), got \(4, 3\)"),
    "string positions": (lambda m, a: a.update(positions=a["positions"].astype(str)),
                         r"positions: expected floating-point numbers, got dtype <U"),
    "times too short": (lambda m, a: a.update(times=a["times"][:-1]),
                        r"times: expected shape \(frames,\) with frames = 4"),
    "dt text": (lambda m, a: m.update(dt="abc"), r"dt: expected a finite step > 0 \[s\], got 'abc'"),
    "dt nan": (lambda m, a: m.update(dt=float("nan")), r"dt: expected a finite step > 0"),
    "dt negative": (lambda m, a: m.update(dt=-0.1), r"dt: expected a finite step > 0"),
    "no method": (lambda m, a: m.pop("method"), r"header: missing \['method'\]"),
    "unknown method": (lambda m, a: m.update(method="rk45"), r"method: expected one of"),
    "format": (lambda m, a: m.update(format="msim.Trajectory 9"), r"format: expected one of"),
    "options nested": (lambda m, a: m.update(options={"a": {"b": 1}}),
                       r"options\['a'\]: expected a number, string, bool or None, got dict"),
    "options list": (lambda m, a: m.update(options=[1]), r"options: expected a dict"),
    "energies not names": (lambda m, a: m.update(energies=["../x"]), r"energies: expected a list"),
    "energy missing": (lambda m, a: a.pop("energy_total"), r"expected arrays \[.*\], got"),
    "energy short": (lambda m, a: a.update(energy_total=a["energy_total"][:2]),
                     r"energy_total: expected shape \(frames,\) with frames = 4, got \(2,\)"),
    "nan position": (lambda m, a: a["positions"].__setitem__((1, 2, 0), np.nan),
                     r"positions: expected finite numbers, got nan at index \(1, 2, 0\)"),
    "inf velocity": (lambda m, a: a["velocities"].__setitem__((0, 0, 1), np.inf),
                     r"velocities: expected finite numbers, got inf"),
    "iterations float": (lambda m, a: a.update(iterations=a["iterations"] * 1.0),
                         r"iterations: expected integer numbers, got dtype float64"),
    "negative seconds": (lambda m, a: a["seconds"].__setitem__(0, -1.0),
                         r"seconds: expected values >= 0"),
    "times backwards": (lambda m, a: a["times"].__setitem__(2, -5.0),
                        r"times: expected non-decreasing times"),
    "edges out of range": (lambda m, a: a["edges"].__setitem__((0, 1), 99),
                           r"edges: expected vertex indices in \[0, 4\), got 99"),
    "negative edge": (lambda m, a: a["edges"].__setitem__((0, 1), -1),
                      r"edges: expected vertex indices in \[0, 4\), got -1"),
    "faces of pairs": (lambda m, a: a.update(faces=np.zeros((2, 2), np.int64)),
                       r"faces: expected shape \(f, 3\)"),
    "diverged text": (lambda m, a: m.update(diverged="3"), r"diverged: expected None or a step"),
    "more frames than steps": (lambda m, a: a.update(seconds=a["seconds"][:1],
                                                     iterations=a["iterations"][:1]),
                               r"positions: expected at most steps \+ 1 = 2 frames"),
    "zero plane normal": (lambda m, a: a.update(planes=np.zeros((1, 4))),
                          r"planes: expected rows of a normal and an offset, got a zero normal"),
    "negative radius": (lambda m, a: a.update(spheres=np.array([[0.0, 0, 0, -1]])),
                        r"spheres: expected radii > 0"),
    "planes per frame, wrong count": (lambda m, a: a.update(planes=np.zeros((9, 1, 4)) + [0, 1, 0, 0]),
                                      r"planes: expected shape \(frames, planes, 4\) with frames = 4"),
    "velocities of other vertices": (lambda m, a: a.update(velocities=a["velocities"][:, :3]),
                                     r"velocities: expected shape \(frames, n, 3\) with n = 4"),
    "extra member": (lambda m, a: a.update(evil=np.zeros(3)), r"expected arrays .* got .*'evil'"),
    "no frames": (lambda m, a: a.update(positions=a["positions"][:0], times=a["times"][:0],
                                        velocities=a["velocities"][:0],
                                        **{f"energy_{e}": a[f"energy_{e}"][:0] for e in m["energies"]}),
                  r"positions: expected at least one frame"),
}


@pytest.fixture(scope="module")
def rope_parts():
    traj = msim.scenes.rope_pendulum(4).run(3, "fms")
    return _parts(traj)


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_a_file_with_a_wrong_field_names_the_file_and_the_field(tmp_path, rope_parts, case):
    meta, arrays = json.loads(json.dumps(rope_parts[0])), {k: v.copy() for k, v in rope_parts[1].items()}
    change, message = MUTATIONS[case]
    change(meta, arrays)
    path = tmp_path / "bad.npz"
    _write(path, meta, arrays)
    error = attempt(lambda: msim.Trajectory.load(path), msim.TrajectoryFileError)
    assert isinstance(error, msim.TrajectoryFileError) and isinstance(error, ValueError)
    assert str(error).startswith(f"{path}: ")
    assert error.path == str(path)
    assert re.search(message, error.problem), error.problem


@pytest.mark.parametrize("meta, message", [
    ("[1, 2]", r"header: expected a JSON object, got list"),
    ("{not json", r"Expecting property name"),
    ("[" * 100_000 + "]" * 100_000, r"meta: JSON nested too deeply"),
    ('{"format": "msim.Trajectory 2", "dt": 1e999}', r"header: missing"),
])
def test_a_bad_header_is_a_clear_error(tmp_path, rope_parts, meta, message):
    path = tmp_path / "bad.npz"
    _write(path, meta, rope_parts[1])
    error = attempt(lambda: msim.Trajectory.load(path), msim.TrajectoryFileError)
    assert isinstance(error, msim.TrajectoryFileError)
    assert re.search(message, str(error)), str(error)


def test_truncated_and_corrupted_files_are_clear_errors(tmp_path, rope_parts):
    path = tmp_path / "good.npz"
    _write(path, *rope_parts)
    whole = path.read_bytes()
    cases = {f"first {k} bytes": whole[:k] for k in (0, 1, 4, 30, 100, len(whole) // 2,
                                                     len(whole) - 22, len(whole) - 1)}
    cases["text"] = b"positions = [[0, 0, 0]]\n"
    middle = len(whole) // 2
    cases["a flipped byte"] = whole[:middle] + bytes([whole[middle] ^ 0xFF]) + whole[middle + 1:]
    for name, data in cases.items():
        bad = tmp_path / "bad.npz"
        bad.write_bytes(data)
        error = attempt(lambda: msim.Trajectory.load(bad), msim.TrajectoryFileError)
        assert isinstance(error, msim.TrajectoryFileError), (name, error)
        assert str(bad) in str(error), name


def test_load_never_unpickles(tmp_path, rope_parts):
    marker = tmp_path / "unpickled"
    meta, arrays = rope_parts
    buffer = io.BytesIO()
    np.save(buffer, np.array([_Touch(marker)], dtype=object), allow_pickle=True)
    path = tmp_path / "pickle.npz"
    _write(path, meta, arrays)
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("evil.npy", buffer.getvalue())
    error = attempt(lambda: msim.Trajectory.load(path), msim.TrajectoryFileError)
    assert isinstance(error, msim.TrajectoryFileError)
    assert "never unpickles" in str(error) and not marker.exists()


class _Touch:
    """Unpickling it creates a file (as a malicious pickle would run any code)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (type(self.path).touch, (self.path,))


def test_a_zip_bomb_is_refused_before_it_inflates(tmp_path, rope_parts):
    meta, arrays = rope_parts
    # 64 MB of zeros as the positions of 2.8 million vertices: deflated to ~64 kB
    frames = len(arrays["times"])
    n = 64 * 2**20 // (frames * 3 * 8)
    meta = dict(meta)
    arrays = dict(arrays, positions=np.zeros((frames, n, 3)), velocities=np.zeros((frames, n, 3)))
    arrays.pop("edges")
    path = tmp_path / "bomb.npz"
    with open(path, "wb") as f:
        np.savez_compressed(f, meta=np.array(json.dumps(meta)), **arrays)
    size = path.stat().st_size
    assert size < 300_000
    tracemalloc.start()
    try:
        error = attempt(lambda: msim.Trajectory.load(path), msim.TrajectoryFileError)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(error, msim.TrajectoryFileError)
    assert "a zip bomb?" in str(error)
    assert peak < 4 * 2**20  # nothing of the 128 MB was inflated


def test_a_member_larger_than_its_header_declares_is_refused(tmp_path, rope_parts):
    meta, arrays = rope_parts
    arrays = {k: v for k, v in arrays.items() if k != "faces"}  # the lying member replaces it
    path = tmp_path / "lying.npz"
    _write(path, meta, arrays)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                   "shape": (10**9, 3)})
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("faces.npy", header.getvalue() + b"\0" * 64)
    error = attempt(lambda: msim.Trajectory.load(path), msim.TrajectoryFileError)
    assert isinstance(error, msim.TrajectoryFileError)
    assert "its header declares 24000000000 bytes" in str(error)


def test_the_error_pickles_with_its_file_and_problem():
    error = msim.TrajectoryFileError("run.npz", "positions: missing")
    back = pickle.loads(pickle.dumps(error))
    assert (back.path, back.problem, str(back)) == ("run.npz", "positions: missing",
                                                    "run.npz: positions: missing")


def test_save_refuses_what_load_would_refuse(tmp_path):
    traj = msim.scenes.rope_pendulum(4).run(2, "fms")
    traj.options["weights"] = object()
    with pytest.raises(TypeError, match=r"options\['weights'\]: expected a number, string, bool"):
        traj.save(tmp_path / "bad.npz")
    traj.options.clear()
    traj.positions = traj.positions[0]
    with pytest.raises(ValueError, match=r"positions: expected shape \(frames, n, 3\)"):
        traj.save(tmp_path / "bad.npz")
    assert not (tmp_path / "bad.npz").exists()  # nothing half-written


def test_load_names_what_it_expected(tmp_path):
    np.savez(tmp_path / "other.npz", positions=np.zeros((1, 2, 3)))
    with pytest.raises(msim.TrajectoryFileError,
                       match=r"other.npz: expected an .npz written by Trajectory.save"):
        msim.Trajectory.load(tmp_path / "other.npz")
