"""Mesh files in; trajectories out as OBJ sequences (Blender) and VTU series (ParaView).

`read_mesh` is a boundary with a contract: it returns a valid `Mesh` or raises
`MeshFileError` (a ValueError) naming the file and what is wrong with it; OSError only when
the file cannot be opened. It never ends the process (meshio calls sys.exit on some files: msim
catches that), never expands XML entities or reads a DTD (VTU and the other XML formats are
parsed with defusedxml), never unpickles or runs code, and never drops cells silently.
OBJ, VTU and Gmsh are read by msim itself: any OBJ face syntax (`f v`, `f v/vt`, `f v//vn`,
`f v/vt/vn`, negative relative indices); VTU in ASCII, base64 or raw appended binary,
zlib or LZMA compressed, each compressed block inflated no further than its header declares;
Gmsh .msh 2.2 and 4.1, ASCII or binary, every declared count checked against the bytes left.
Legacy .vtk, PLY, OFF, MEDIT .mesh and STL are read through meshio, with its errors
(and its sys.exit) turned into MeshFileError; for all of these every size a file declares is
checked against the file's size before anything is allocated for it. Other formats are refused
(convert them with meshio): meshio's readers of some of them never return on a truncated file.

Springs are every distinct edge of the mesh's cells (all six edges of each tetrahedron, as the
hippo, frog and dog examples of Liu et al. 2013 do; the three of each triangle; the boundary
of each quad and polygon). Faces for drawing are the triangles, quads split in two and
polygons split into a fan of triangles; else the boundary of the tetrahedra.

Trajectories are saved whole with `Trajectory.save` / `Trajectory.load` (msim.trajectory).
"""

from __future__ import annotations

import base64
import contextlib
import io
import lzma
import math
import os
import re
import warnings
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Sequence
from xml.sax.saxutils import quoteattr

import numpy as np

from ._core import System  # the base of msim.System: this module needs no more of it
from ._files import MeshFileError, inflation_limit
from ._gmsh import read_gmsh
from ._geometry import (_bounds, _finite_points, _grid_triangles, _indices, _plane_patch, _rows4,
                        _sphere_triangles)
from .mesh import CELL_EDGES, Mesh, boundary_faces, cell_edges, unique_edges
from .strain import vertex_strain  # noqa: F401 (msim.io.vertex_strain, where it used to live)
from .trajectory import Trajectory, load_trajectory, save_trajectory  # noqa: F401 (likewise)

__all__ = ["MeshFileError", "MeshFileWarning", "read_mesh", "write_mesh",
           "write_obj_sequence", "write_vtu_series"]


class MeshFileWarning(UserWarning):
    """read_mesh left out cells of kinds msim makes no springs from (wedges, pyramids,
    quadratic cells, ...): the message names the file, the kinds and how many of each."""


# ---------------------------------------------------------------- read_mesh


def read_mesh(path: str | Path) -> Mesh:
    """Read a mesh file: vertices (n,3) [m], springs (m,2) from the edges of its cells, faces
    (f,3) for drawing (see the module's description for the formats and the checks).

    Vertices unused by any cell are kept (they become free particles); 2-D points get z = 0.
    Cells of kinds without springs in msim (wedges, pyramids, quadratic cells) are left out
    with a MeshFileWarning naming them. Raises MeshFileError when the file is not a valid mesh
    (malformed, truncated, an index out of range, a non-finite coordinate, an XML entity or
    DTD, a size beyond what the file holds); OSError when it cannot be opened.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a file name, got {type(path).__name__}")
    path = Path(path)
    with open(path, "rb") as f:  # OSError (missing, unreadable) is not the file's content
        data = f.read()
    reader = _READERS.get(path.suffix.lower(), _read_meshio)
    try:
        points, blocks = reader(path, data)
        return _mesh(path, points, blocks)
    except MeshFileError:
        raise
    except (Exception, SystemExit) as error:  # meshio ends the process on some files
        what = str(error) or type(error).__name__
        raise MeshFileError(path, f"cannot read it as a {path.suffix or 'mesh'} file: "
                            f"{what} ({type(error).__name__})") from None


Blocks = list[tuple[str, np.ndarray]]  # (meshio cell kind, (cells, nodes) vertex indices)


def _mesh(path: Path, points: Any, blocks: Blocks) -> Mesh:
    """The Mesh of `points` and cell `blocks`, every index and coordinate checked."""
    points = np.asarray(points)
    if points.ndim != 2 or not 1 <= points.shape[1] <= 3 or points.dtype.kind not in "iuf":
        raise MeshFileError(path, f"expected points (n, 3) of numbers, got shape {points.shape} "
                            f"dtype {points.dtype}")
    vertices = np.zeros((len(points), 3))
    vertices[:, :points.shape[1]] = points
    bad = np.flatnonzero(~np.isfinite(vertices).all(axis=1))
    if len(bad):
        raise MeshFileError(path, f"vertex {bad[0]} has a non-finite coordinate "
                            f"{vertices[bad[0]].tolist()} ({len(bad)} such vertices)")
    n, kept, dropped = len(vertices), {}, Counter()
    for kind, cells in blocks:
        cells = np.asarray(cells)
        if cells.dtype.kind not in "iu" or cells.ndim != 2:
            raise MeshFileError(path, f"{kind} cells: expected rows of vertex indices, got "
                                f"shape {cells.shape} dtype {cells.dtype}")
        if cells.size and (cells.min() < 0 or cells.max() >= n):
            bad = cells.min() if cells.min() < 0 else cells.max()
            raise MeshFileError(path, f"{kind} cells: vertex index {bad} out of range: the file "
                                f"has {n} vertices (0 to {n - 1})")
        if kind in CELL_EDGES or kind == "polygon":
            kept.setdefault(kind, []).append(cells.astype(np.int64))
        elif kind != "vertex":  # a vertex cell marks a point, which is kept anyway
            dropped[kind] += len(cells)
    if dropped:
        warnings.warn(f"read_mesh: {path}: left out cells msim makes no springs from: "
                      + ", ".join(f"{count} {kind}" for kind, count in sorted(dropped.items()))
                      + f" (it reads {sorted(CELL_EDGES)} and polygons)", MeshFileWarning,
                      stacklevel=3)
    pairs = [cell_edges(kind, c) for kind, group in kept.items() if kind != "polygon"
             for c in group]
    pairs += [np.stack([p, np.roll(p, -1, axis=1)], axis=-1).reshape(-1, 2)
              for p in kept.get("polygon", [])]
    edges = unique_edges(np.concatenate(pairs)) if pairs else np.zeros((0, 2), np.int64)
    loops = edges[:, 0] == edges[:, 1]
    if loops.any():
        raise MeshFileError(path, f"a cell repeats vertex {edges[loops][0, 0]}: its edge from "
                            "the vertex to itself cannot be a spring")
    faces = list(kept.get("triangle", []))
    faces += [q[:, corners] for q in kept.get("quad", []) for corners in ([0, 1, 2], [0, 2, 3])]
    faces += [p[:, [0, i, i + 1]] for p in kept.get("polygon", [])
              for i in range(1, p.shape[1] - 1)]
    if not faces and "tetra" in kept:
        faces = [boundary_faces(np.concatenate(kept["tetra"]))]
    return Mesh(vertices, edges,
                np.concatenate(faces).astype(np.int64) if faces else np.zeros((0, 3), np.int64))


# ---------------------------------------------------------------- OBJ

# OBJ statements that carry no geometry msim uses: texture and normal vectors, groups,
# materials, smoothing, points ("p": the vertices are kept anyway)
OBJ_IGNORED = {"vt", "vn", "vp", "o", "g", "s", "mg", "usemtl", "mtllib", "usemap", "maplib",
               "lod", "bevel", "c_interp", "d_interp", "shadow_obj", "trace_obj", "p"}
OBJ_CELLS = {2: "line", 3: "triangle", 4: "quad"}
OBJ_KEYWORD = re.compile(r"[A-Za-z_]{1,16}")


def _read_obj(path: Path, data: bytes) -> tuple[np.ndarray, Blocks]:
    """Points and cells of a Wavefront OBJ: `v` vertices (x y z, optional w or colours),
    `f` polygons and `l` polylines with references `v`, `v/vt`, `v//vn` or `v/vt/vn`
    (negative: counted back from the latest vertex). Free-form geometry (curv, surf, ...) is
    left out with a warning."""
    coordinates: list[list[str]] = []
    cells: dict[int, list[list[int]]] = {}
    skipped: Counter = Counter()
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        tokens = line.split("#", 1)[0].split()
        if not tokens:
            continue
        key, args = tokens[0], tokens[1:]
        if key == "v":
            if len(args) < 3:
                raise MeshFileError(path, f"line {number}: a vertex needs x y z, got {line!r}")
            coordinates.append(args[:3])
        elif key in ("f", "l"):
            least = 3 if key == "f" else 2
            if len(args) < least:
                raise MeshFileError(path, f"line {number}: {'a face' if key == 'f' else 'a line'}"
                                    f" needs at least {least} vertices, got {line!r}")
            refs = [_obj_index(path, number, ref, len(coordinates)) for ref in args]
            if key == "f":
                cells.setdefault(len(refs), []).append(refs)
            else:  # a polyline: one segment per consecutive pair
                cells.setdefault(2, []).extend(zip(refs[:-1], refs[1:]))
        elif not OBJ_KEYWORD.fullmatch(key):
            raise MeshFileError(path, f"line {number}: not an OBJ statement: {line[:40]!r} "
                                "(is it a text file?)")
        elif key not in OBJ_IGNORED:
            skipped[key] += 1
    if skipped:
        warnings.warn(f"read_mesh: {path}: left out OBJ statements msim does not read: "
                      + ", ".join(f"{count} '{key}'" for key, count in sorted(skipped.items())),
                      MeshFileWarning, stacklevel=4)
    try:
        points = np.array(coordinates, dtype=float).reshape(-1, 3)
    except ValueError as error:
        raise MeshFileError(path, f"a vertex coordinate is not a number ({error})") from None
    blocks = [(OBJ_CELLS.get(size, "polygon"), np.array(rows, dtype=np.int64))
              for size, rows in sorted(cells.items())]
    return points, blocks


def _obj_index(path: Path, number: int, ref: str, defined: int) -> int:
    """The 0-based vertex index of one OBJ reference `v[/vt][/vn]` on line `number`, where
    `defined` vertices come before it (negative references count back from there)."""
    try:
        index = int(ref.split("/", 1)[0])
    except ValueError:
        raise MeshFileError(path, f"line {number}: expected a vertex reference (v, v/vt, v//vn "
                            f"or v/vt/vn), got {ref!r}") from None
    if index == 0 or index < -defined:
        raise MeshFileError(path, f"line {number}: vertex reference {index} out of range: "
                            f"references count from 1 (or back from -1), and {defined} "
                            "vertices come before it")
    return index - 1 if index > 0 else defined + index


# ---------------------------------------------------------------- VTU

VTU_TYPES = {name: np.dtype(name.lower()) for name in
             ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
              "Float32", "Float64")}
# VTK cell type -> (meshio kind, node order); polylines (4) and polygons (7) have any size
VTK_CELLS = {1: ("vertex", None), 3: ("line", None), 5: ("triangle", None),
             8: ("quad", [0, 1, 3, 2]), 9: ("quad", None), 10: ("tetra", None),
             11: ("hexahedron", [0, 1, 3, 2, 4, 5, 7, 6]), 12: ("hexahedron", None)}
VTK_NAMES = {2: "poly_vertex", 6: "triangle_strip", 13: "wedge", 14: "pyramid",
             21: "line3", 22: "triangle6", 23: "quad8", 24: "tetra10", 25: "hexahedron20",
             42: "polyhedron"}
DECOMPRESSORS = {"vtkZLibDataCompressor": zlib.decompressobj,
                 "vtkLZMADataCompressor": lzma.LZMADecompressor}


def _parse_xml(path: Path, text: bytes):
    """The root element of XML `text`, parsed by defusedxml: a DTD, an entity or an external
    reference is a MeshFileError, never expanded or fetched."""
    try:
        import defusedxml.ElementTree as SafeET
        from defusedxml import DefusedXmlException
    except ImportError as err:
        raise ImportError('msim.io reads XML with defusedxml: pip install "msim[io]"') from err
    try:
        return SafeET.fromstring(text, forbid_dtd=True)
    except DefusedXmlException as error:
        raise MeshFileError(path, f"refused XML: it declares a {type(error).__name__[:-9]} "
                            f"({error}); a mesh file needs none, and entities can expand "
                            "without bound or read other files") from None
    except SafeET.ParseError as error:
        raise MeshFileError(path, f"not well-formed XML (truncated?): {error}") from None


class _VtuData:
    """Reads the DataArrays of one VTU file (ascii, binary, appended base64 or raw; zlib or
    LZMA blocks), inflating no more than the file's inflation budget in all."""

    def __init__(self, path: Path, root, appended: bytes | str | None, size: int) -> None:
        self.path, self.appended = path, appended
        self.budget = inflation_limit(size)
        header = root.get("header_type", "UInt32")
        if header not in ("UInt32", "UInt64"):
            raise MeshFileError(path, f"header_type: expected UInt32 or UInt64, got {header!r}")
        order = {"LittleEndian": "<", "BigEndian": ">"}.get(root.get("byte_order", "LittleEndian"))
        if order is None:
            raise MeshFileError(path, f"byte_order: expected LittleEndian or BigEndian, got "
                                f"{root.get('byte_order')!r}")
        self.order, self.header = order, np.dtype(VTU_TYPES[header]).newbyteorder(order)
        compressor = root.get("compressor")
        if compressor is not None and compressor not in DECOMPRESSORS:
            raise MeshFileError(path, f"compressor: msim reads {sorted(DECOMPRESSORS)}, got "
                                f"{compressor!r}")
        self.decompressor = DECOMPRESSORS.get(compressor)

    def array(self, element, name: str, count: int) -> np.ndarray:
        """The `count` values of DataArray `element` (called `name` in messages)."""
        if element is None:
            raise MeshFileError(self.path, f"{name}: missing DataArray")
        kind = element.get("type")
        if kind not in VTU_TYPES:
            raise MeshFileError(self.path, f"{name}: type {kind!r} is not one of "
                                f"{sorted(VTU_TYPES)}")
        dtype = VTU_TYPES[kind].newbyteorder(self.order)
        self._spend(name, count * dtype.itemsize)
        form = element.get("format", "ascii")
        if form == "ascii":
            tokens = (element.text or "").split()
            if len(tokens) != count:
                raise MeshFileError(self.path, f"{name}: expected {count} values, got "
                                    f"{len(tokens)}")
            try:
                return np.array(tokens, dtype=VTU_TYPES[kind])
            except ValueError as error:
                raise MeshFileError(self.path, f"{name}: {error}") from None
        if form == "binary":
            raw = self._decode((element.text or "").strip(), name)
        elif form == "appended":
            raw = self._appended(element, name)
        else:
            raise MeshFileError(self.path, f"{name}: format {form!r} is not ascii, binary or "
                                "appended")
        if len(raw) != count * dtype.itemsize:
            raise MeshFileError(self.path, f"{name}: expected {count} values of {kind} "
                                f"({count * dtype.itemsize} bytes), got {len(raw)} bytes")
        return np.frombuffer(raw, dtype).astype(VTU_TYPES[kind])

    def _spend(self, name: str, nbytes: int) -> None:
        """Take `nbytes` from the inflation budget, or refuse."""
        if nbytes > self.budget:
            raise MeshFileError(self.path, f"{name}: declares {nbytes} bytes, more than this "
                                "file can hold (each value needs some of the file's bytes, and "
                                "compression shrinks at most "
                                f"{inflation_limit(1) - inflation_limit(0)}-fold)")
        self.budget -= nbytes

    def _appended(self, element, name: str) -> bytes:
        """The bytes of an appended DataArray, from its offset in the AppendedData section."""
        if self.appended is None:
            raise MeshFileError(self.path, f"{name}: format 'appended' but no AppendedData")
        try:
            offset = int(element.get("offset", ""))
        except ValueError:
            raise MeshFileError(self.path, f"{name}: offset {element.get('offset')!r} is not "
                                "an integer") from None
        if not 0 <= offset <= len(self.appended):
            raise MeshFileError(self.path, f"{name}: offset {offset} outside the "
                                f"{len(self.appended)} appended bytes (truncated?)")
        if isinstance(self.appended, str):
            return self._decode(self.appended[offset:], name)
        return self._blocks(self.appended[offset:], name)

    def _decode(self, text: str, name: str) -> bytes:
        """The data of base64 `text`: its header (encoded together with the data, or on its
        own, as VTK does for compressed data) decoded first, then the data it declares."""
        head = self.header.itemsize * (3 if self.decompressor else 1)
        chars = 4 * math.ceil(head / 3)
        try:
            first = base64.b64decode(text[:chars])
            if self.decompressor:
                blocks = int(np.frombuffer(first[:self.header.itemsize], self.header)[0])
                if blocks > len(text):
                    raise MeshFileError(self.path, f"{name}: declares {blocks} compressed "
                                        f"blocks in {len(text)} characters")
                head = self.header.itemsize * (3 + blocks)
                chars = 4 * math.ceil(head / 3)
            if text[:chars].endswith("="):  # the header was encoded on its own
                raw = base64.b64decode(text[:chars])[:head] + base64.b64decode(text[chars:])
            else:
                raw = base64.b64decode(text)
        except (ValueError, TypeError) as error:  # binascii.Error is a ValueError
            raise MeshFileError(self.path, f"{name}: bad base64 data ({error})") from None
        return self._blocks(raw, name)

    def _blocks(self, raw: bytes, name: str) -> bytes:
        """The data after the binary header at the start of `raw`: uncompressed, the byte
        count and the bytes; compressed, the block table and each block, inflated to exactly
        its declared size."""
        item = self.header.itemsize
        if len(raw) < item:
            raise MeshFileError(self.path, f"{name}: truncated binary header")
        first = int(np.frombuffer(raw[:item], self.header)[0])
        if self.decompressor is None:
            if first > len(raw) - item:
                raise MeshFileError(self.path, f"{name}: declares {first} bytes, "
                                    f"{len(raw) - item} follow (truncated?)")
            return raw[item:item + first]
        if len(raw) < item * (3 + first):
            raise MeshFileError(self.path, f"{name}: truncated table of {first} compressed blocks")
        table = np.frombuffer(raw[:item * (3 + first)], self.header).astype(np.int64)
        block, last, sizes = int(table[1]), int(table[2]), table[3:]
        expected = [block] * first
        if first and last:
            expected[-1] = last
        start, out = item * (3 + first), []
        if int(sizes.sum()) > len(raw) - start:
            raise MeshFileError(self.path, f"{name}: its blocks declare {int(sizes.sum())} "
                                f"compressed bytes, {len(raw) - start} follow (truncated?)")
        self._spend(name, sum(expected))
        for k, (size, want) in enumerate(zip(sizes.tolist(), expected)):
            inflated = self.decompressor().decompress(raw[start:start + size], want + 1)
            if len(inflated) != want:
                raise MeshFileError(self.path, f"{name}: compressed block {k} inflates to "
                                    f"{'more than' if len(inflated) > want else len(inflated)}"
                                    f"{' ' + str(want) if len(inflated) > want else ''} bytes, "
                                    f"its header declares {want}")
            out.append(inflated)
            start += size
        return b"".join(out)


def _read_vtu(path: Path, data: bytes) -> tuple[np.ndarray, Blocks]:
    """Points and cells of a VTK XML UnstructuredGrid (.vtu): every Piece's Points and the
    Cells' connectivity, offsets and types."""
    appended: bytes | str | None = None
    tag = re.search(rb"<AppendedData\b[^>]*>", data)
    if tag is not None and re.search(rb"""encoding\s*=\s*["']raw["']""", tag.group()):
        end = data.rfind(b"</AppendedData>")
        if end < tag.end():
            raise MeshFileError(path, "raw AppendedData without its closing tag (truncated?)")
        body = data[tag.end():end]
        if b"_" not in body:
            raise MeshFileError(path, "raw AppendedData without the '_' that starts it")
        appended = body[body.index(b"_") + 1:]
        data = data[:tag.end()] + data[end:]
    root = _parse_xml(path, data)
    if root.tag != "VTKFile" or root.get("type") != "UnstructuredGrid":
        raise MeshFileError(path, f"expected a VTKFile of type UnstructuredGrid, got "
                            f"<{root.tag} type={root.get('type')!r}>")
    section = root.find("AppendedData")
    if section is not None and appended is None:
        text = (section.text or "").strip()
        if section.get("encoding") != "base64" or not text.startswith("_"):
            raise MeshFileError(path, "AppendedData: expected encoding raw or base64 data "
                                "after '_'")
        appended = text[1:]
    reader = _VtuData(path, root, appended, len(data) + len(appended or b""))
    pieces = root.findall("UnstructuredGrid/Piece")
    if not pieces:
        raise MeshFileError(path, "no UnstructuredGrid Piece")
    points, blocks, offset = [], [], 0
    for p, piece in enumerate(pieces):
        n, cells = (_count(path, piece, f"Piece {p}", key)
                    for key in ("NumberOfPoints", "NumberOfCells"))
        element = piece.find("Points/DataArray")
        components = _count(path, element, f"Piece {p} Points", "NumberOfComponents", 1)
        if element is not None and components != 3:
            raise MeshFileError(path, f"Piece {p} Points: expected 3 components, got {components}")
        points.append(reader.array(element, f"Piece {p} Points", 3 * n).reshape(n, 3))
        arrays = {a.get("Name"): a for a in piece.findall("Cells/DataArray")}
        offsets = reader.array(arrays.get("offsets"), f"Piece {p} offsets", cells).astype(np.int64)
        if np.any(np.diff(offsets) < 0) or (cells and offsets[0] < 0):
            raise MeshFileError(path, f"Piece {p} offsets: expected non-decreasing cell ends")
        total = int(offsets[-1]) if cells else 0
        connectivity = reader.array(arrays.get("connectivity"), f"Piece {p} connectivity",
                                    total).astype(np.int64)
        types = reader.array(arrays.get("types"), f"Piece {p} types", cells).astype(np.int64)
        blocks += _vtk_cells(path, connectivity + offset, offsets, types)
        offset += n
    return np.concatenate(points), blocks


def _count(path: Path, element, where: str, key: str, default: int | None = None) -> int:
    """The non-negative integer attribute `key` of `element`."""
    value = None if element is None else element.get(key)
    if value is None and default is not None:
        return default
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = -1
    if count < 0:
        raise MeshFileError(path, f"{where}: {key} expected a count >= 0, got {value!r}")
    return count


def _vtk_cells(path: Path, connectivity: np.ndarray, offsets: np.ndarray,
               types: np.ndarray) -> Blocks:
    """Cell blocks from VTK's flat connectivity, cell ends (offsets) and cell types."""
    starts = np.concatenate([[0], offsets[:-1]])
    sizes = offsets - starts
    blocks: Blocks = []
    for vtk, size in sorted(set(zip(types.tolist(), sizes.tolist()))):
        chosen = (types == vtk) & (sizes == size)
        rows = connectivity[starts[chosen, None] + np.arange(size)]
        if vtk == 4 and size >= 2:  # a polyline: one line per consecutive pair
            blocks.append(("line", np.stack([rows[:, :-1], rows[:, 1:]], -1).reshape(-1, 2)))
        elif vtk == 7 and size >= 3:
            blocks.append((OBJ_CELLS.get(size, "polygon"), rows))
        elif vtk in VTK_CELLS:
            kind, order = VTK_CELLS[vtk]
            nodes = {"vertex": 1, "line": 2, "triangle": 3, "quad": 4, "tetra": 4,
                     "hexahedron": 8}[kind]
            if size != nodes:
                raise MeshFileError(path, f"a {kind} cell (VTK type {vtk}) with {size} "
                                    f"vertices, expected {nodes}")
            blocks.append((kind, rows if order is None else rows[:, order]))
        else:
            blocks.append((VTK_NAMES.get(vtk, f"VTK cell type {vtk}"), rows))
    return blocks


# ---------------------------------------------------------------- other formats, by meshio

# counts a file declares, each of which takes at least one byte of it: (suffixes, pattern)
DECLARED = [
    ((".vtk",), rb"(?m)^\s*(?:POINTS|CELLS|CELL_TYPES|POLYGONS|LINES|VERTICES|TRIANGLE_STRIPS|"
                rb"POINT_DATA|CELL_DATA)\s+(\d+)(?:[ \t]+(\d+))?"),
    ((".ply",), rb"(?m)^element\s+\S+\s+(\d+)"),
    ((".off",), rb"\A\s*N?C?OFF\s+(\d+)\s+(\d+)"),
    ((".mesh",), rb"(?m)^\s*(?:Vertices|Edges|Triangles|Quadrilaterals|Tetrahedra|Hexahedra)"
                 rb"\s+(\d+)"),
]
# the formats read through meshio: those whose readers return on any file
MESHIO_FORMATS = {".vtk": "vtk", ".ply": "ply", ".off": "off",
                  ".mesh": "medit", ".stl": "stl"}


def _read_meshio(path: Path, data: bytes) -> tuple[np.ndarray, Blocks]:
    """Points and cells read by meshio, after the declared counts a file of this kind
    states are checked against its size."""
    try:
        import meshio
    except ImportError as err:
        raise ImportError('msim.io.read_mesh needs meshio: pip install "msim[io]"') from err
    suffix = path.suffix.lower()
    if suffix not in MESHIO_FORMATS:
        raise MeshFileError(path, f"msim reads .obj, .vtu and {', '.join(MESHIO_FORMATS)} files, "
                            f"not {suffix or 'files without a suffix'}: convert it with "
                            f"meshio (meshio convert {path.name} mesh.vtu)")
    if suffix == ".stl" and not data.lstrip().startswith(b"solid") and len(data) >= 84:
        triangles = int.from_bytes(data[80:84], "little")  # binary STL: 50 bytes each
        if 84 + 50 * triangles != len(data):
            raise MeshFileError(path, f"declares {triangles} triangles, {len(data)} bytes hold "
                                f"{(len(data) - 84) // 50}")
    # meshio's PLY and OFF readers look for the end of the header line by line for ever
    if suffix == ".ply" and not re.search(rb"(?m)^[ \t]*end_header[ \t\r]*$", data):
        raise MeshFileError(path, "PLY header without its end_header line (truncated?)")
    if suffix == ".off" and not re.match(rb"[^\n]*\n(?:[ \t\r\f\v]*(?:#[^\n]*)?\n)*"
                                         rb"[ \t\r\f\v]*[^#\s]", data):
        raise MeshFileError(path, "OFF header without the line of counts (truncated?)")
    for suffixes, pattern in DECLARED:
        if suffix in suffixes:
            for match in re.finditer(pattern, data):
                for count in filter(None, match.groups()):
                    if int(count) > len(data):
                        raise MeshFileError(path, f"declares {int(count)} items in "
                                            f"{match.group().split()[0].decode(errors='replace')}"
                                            f", more than the file's {len(data)} bytes can hold")
    printed = io.StringIO()  # meshio prints its warnings, and why it gives up, then exits
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            m = meshio.read(path, file_format=MESHIO_FORMATS[suffix])
    except (Exception, SystemExit) as error:
        said = " ".join(printed.getvalue().split())
        reason = (f"{error} ({type(error).__name__})" if not isinstance(error, SystemExit)
                  else "")
        raise MeshFileError(path, f"meshio cannot read it: {'; '.join(filter(None, [reason, said]))}"
                            ) from None
    said = " ".join(printed.getvalue().split())
    if said:
        warnings.warn(f"read_mesh: {path}: meshio says: {said}", MeshFileWarning, stacklevel=4)
    return m.points, [(block.type, np.asarray(block.data)) for block in m.cells]


_READERS = {".obj": _read_obj, ".vtu": _read_vtu, ".msh": read_gmsh}


# ---------------------------------------------------------------- writers


def write_mesh(path: str | Path, vertices: np.ndarray, *, faces: np.ndarray | None = None,
               tets: np.ndarray | None = None) -> None:
    """Write vertices (n,3) [m] with triangles (f,3) and/or tetrahedra (k,4) in any format
    meshio knows (.msh as Gmsh 4.1, which read_mesh reads). ValueError for non-finite vertices
    or indices out of range, before any file is written."""
    import meshio

    x = _finite_points("vertices", vertices)
    cells: Sequence = [(kind, _indices(kind_name, c, width, len(x)))
                       for kind, kind_name, c, width in (("triangle", "faces", faces, 3),
                                                         ("tetra", "tets", tets, 4))
                       if c is not None and len(c)]
    gmsh = {"file_format": "gmsh"} if Path(path).suffix.lower() == ".msh" else {}
    meshio.write(path, meshio.Mesh(x, cells), **gmsh)


def write_obj_sequence(traj: Trajectory, faces: np.ndarray | None = None,
                       folder: str | Path | None = None, stem: str = "frame", *,
                       colliders: bool = True) -> list[Path]:
    """Write each recorded frame as folder/stem_0000.obj; return the paths.

    faces (f,3), default traj.faces; without faces the springs (traj.edges) are written as
    OBJ lines. `write_obj_sequence(traj, folder)` takes both from the Trajectory. With
    colliders (traj.planes, traj.spheres, per frame when they moved), each file holds one
    OBJ object per body: `o body`, then `o sphere_0`, ... (a latitude-longitude mesh at the
    drawn radius) and `o plane_0`, ... (a square patch under the run): Blender's OBJ importer
    splits them into separate objects ("Split by Object"), its "Stop-motion OBJ" importer
    plays the sequence. ValueError for non-finite positions or indices out of range, before
    any file is written.
    """
    if folder is None and isinstance(faces, (str, os.PathLike)):
        faces, folder = None, faces
    if folder is None:
        raise TypeError("folder: expected the folder to write the frames into")
    frames, cells, parts = _export(traj, faces, None, colliders)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if cells[0][0] == "triangle":
        topology = "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in cells[0][1])
    else:
        topology = "".join(f"l {a + 1} {b + 1}\n" for a, b in cells[0][1])
    paths = []
    for k, x in enumerate(frames):
        lines = [f"# msim {traj.method} t={traj.times[k]:.9g}\no body\n", _obj_vertices(x),
                 topology]
        base = len(x)
        for name, triangles in parts(k):
            points = triangles.reshape(-1, 3)
            lines += [f"o {name}\n", _obj_vertices(points),
                      "".join(f"f {base + 3 * i + 1} {base + 3 * i + 2} {base + 3 * i + 3}\n"
                              for i in range(len(triangles)))]
            base += len(points)
        path = folder / f"{stem}_{k:04d}.obj"
        path.write_text("".join(lines))
        paths.append(path)
    return paths


def _obj_vertices(points: np.ndarray) -> str:
    return "".join(f"v {p[0]:.9g} {p[1]:.9g} {p[2]:.9g}\n" for p in points)


def write_vtu_series(traj: Trajectory, folder: str | Path, *,
                     faces: np.ndarray | None = None, edges: np.ndarray | None = None,
                     system: System | None = None, stem: str = "frame",
                     colliders: bool = True) -> Path:
    """Write each frame as VTU (triangles `faces` and/or line springs `edges`, default the
    Trajectory's faces, else its springs) plus stem.pvd indexing them by time; return the .pvd
    path, which ParaView opens as an animation.

    Point data, for colouring in ParaView: "velocity" (n,3) [m/s], the recorded velocities
    (for a Trajectory without them, central differences of the frames, one-sided at the
    ends); with `system` (the run's System) also "strain", the mean (l - r)/r of the springs
    at each vertex, and "fixed", 1 for kinematic vertices and 0 for free ones.

    With colliders (traj.planes, traj.spheres), a second series stem_colliders.pvd holds them
    as triangle surfaces (spheres at their drawn radius, planes as a square patch under the
    run), one VTU per frame when they moved, else one for the whole run: open it beside the
    body's series to colour it on its own. ValueError for non-finite positions or indices out
    of range, before any file is written.
    """
    import meshio

    frames, cells, parts = _export(traj, faces, edges, colliders)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    velocities = traj.velocities
    if velocities is None:
        velocities = (np.gradient(frames, traj.times, axis=0)
                      if len(traj.times) > 1 else np.zeros_like(frames))
    fixed = None
    if system is not None:
        fixed = np.zeros(system.n_vertices, dtype=np.int8)
        fixed[system.fixed] = 1
    entries = []
    for k, x in enumerate(frames):
        data = {"velocity": velocities[k]}
        if system is not None:
            data["strain"] = vertex_strain(x, system.edges, system.rest_lengths)
            data["fixed"] = fixed
        name = f"{stem}_{k:04d}.vtu"
        meshio.write(folder / name, meshio.Mesh(x, cells, point_data=data))
        entries.append((traj.times[k], name))
    pvd = _pvd(folder / f"{stem}.pvd", entries)
    moving = any(np.ndim(c) == 3 for c in (traj.planes, traj.spheres) if c is not None)
    entries = []
    for k in range(len(frames) if moving else 1):
        surfaces = [t for _, t in parts(k)]
        if not surfaces:
            break
        triangles = np.concatenate(surfaces)
        name = f"{stem}_colliders_{k:04d}.vtu"
        meshio.write(folder / name, meshio.Mesh(
            triangles.reshape(-1, 3), [("triangle", np.arange(3 * len(triangles)).reshape(-1, 3))]))
        entries.append((traj.times[k], name))
    if entries:
        _pvd(folder / f"{stem}_colliders.pvd", entries)
    return pvd


def _pvd(path: Path, entries: list[tuple[float, str]]) -> Path:
    """A ParaView collection file indexing VTU files by time [s]."""
    lines = [f'    <DataSet timestep="{t:.9g}" file={quoteattr(name)}/>' for t, name in entries]
    path.write_text('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1">\n'
                    "  <Collection>\n" + "\n".join(lines) + "\n  </Collection>\n</VTKFile>\n")
    return path


def _export(traj: Trajectory, faces, edges, colliders: bool):
    """What the writers export, checked before any file is written: (positions (frames, n,
    3), cells [(kind, indices)], parts(k) -> [(name, triangles (t,3,3))] of the colliders in
    frame k)."""
    if not isinstance(traj, Trajectory):
        raise TypeError(f"traj: expected a Trajectory, got {type(traj).__name__}")
    frames = np.asarray(traj.positions, dtype=float)
    if frames.ndim != 3 or frames.shape[2] != 3 or not len(frames):
        raise ValueError(f"traj.positions: expected (frames, n, 3) [m], got shape {frames.shape}")
    for k, x in enumerate(frames):
        _finite_points(f"traj.positions[{k}]", x)
    n = frames.shape[1]
    faces = _indices("faces", traj.faces if faces is None else faces, 3, n)
    edges = _indices("edges", edges, 2, n)
    if (faces is None or not len(faces)) and edges is None:  # a rope: (0, 3) faces, springs
        edges = _indices("traj.edges", traj.edges, 2, n)
    cells = [(kind, c) for kind, c in (("triangle", faces), ("line", edges))
             if c is not None and len(c)]
    if not cells:
        raise ValueError("faces: nothing to write: no faces or edges given, and the Trajectory "
                         "holds none (traj.faces, traj.edges)")
    rows = {name: _collider_frames(name, getattr(traj, name) if colliders else None,
                                   len(frames)) for name in ("planes", "spheres")}
    box = _bounds(frames.reshape(-1, 3))

    def parts(k: int) -> list[tuple[str, np.ndarray]]:
        return ([(f"sphere_{i}", _sphere_triangles(s)) for i, s in enumerate(rows["spheres"][k])]
                + [(f"plane_{i}", _grid_triangles(_plane_patch(p, box)))
                   for i, p in enumerate(rows["planes"][k])])

    return frames, cells, parts


def _collider_frames(name: str, value, frames: int) -> np.ndarray:
    """Collider rows per frame (frames, k, 4) from (k,4), (frames, k, 4) or None."""
    if value is None:
        return np.zeros((frames, 0, 4))
    a = np.asarray(value, dtype=float)
    if a.ndim == 3:
        if a.shape[0] != frames:
            raise ValueError(f"traj.{name}: expected (k, 4) or ({frames}, k, 4), got {a.shape}")
        return np.stack([_rows4(f"traj.{name}[{k}]", r, name) for k, r in enumerate(a)])
    return np.repeat(_rows4(f"traj.{name}", a, name)[None], frames, axis=0)
