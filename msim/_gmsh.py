"""Gmsh .msh files (formats 2.2 and 4.1, ASCII and binary), read without trusting them.

The reader takes only $MeshFormat, $Nodes and $Elements and skips every other section.
Each count a section declares is checked against the bytes left in the section before an
array is made for it, so a file never makes the reader allocate more than a small multiple
of its own size; node tags are mapped to indices by a sorted search (not an array as long as
the largest tag), and an element naming a tag $Nodes does not define is an error.

Layouts (Gmsh reference manual, "MSH file format"):
  4.1  $Nodes:    numEntityBlocks numNodes minTag maxTag, then per block
                  entityDim entityTag parametric numNodesInBlock, the block's tags, then its
                  coordinates x y z (+ entityDim parametric coordinates if parametric)
       $Elements: numEntityBlocks numElements minTag maxTag, then per block
                  entityDim entityTag elementType numElementsInBlock, then per element
                  its tag and node tags
       binary: ints are int32, counts and tags size_t (data-size bytes), coordinates double
  2.2  $Nodes:    numNodes, then `tag x y z` per node
       $Elements: numElements, then `tag type numTags tags... nodes...` per element;
       binary: int32 throughout, nodes as (tag, x, y, z), elements in blocks headed by
       (type, numElementsInBlock, numTags)
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ._files import MeshFileError

# Gmsh element type -> (meshio kind, nodes per element)
CELLS = {1: ("line", 2), 2: ("triangle", 3), 3: ("quad", 4), 4: ("tetra", 4),
         5: ("hexahedron", 8), 6: ("wedge", 6), 7: ("pyramid", 5), 8: ("line3", 3),
         9: ("triangle6", 6), 10: ("quad9", 9), 11: ("tetra10", 10), 12: ("hexahedron27", 27),
         13: ("wedge18", 18), 14: ("pyramid14", 14), 15: ("vertex", 1), 16: ("quad8", 8),
         17: ("hexahedron20", 20), 18: ("wedge15", 15), 19: ("pyramid13", 13)}
SECTION = re.compile(rb"\$(\w+)[ \t\r]*\n")


class _Cursor:
    """Reads numbers from one section's bytes, each count checked against what is left."""

    def __init__(self, path: Path, name: str, data: bytes, binary: bool, order: str):
        self.path, self.name, self.binary, self.order = path, name, binary, order
        self.data, self.at = data, 0
        self.tokens = None if binary else data.split()

    def fail(self, problem: str) -> MeshFileError:
        return MeshFileError(self.path, f"${self.name}: {problem}")

    def left(self, itemsize: int) -> int:
        """How many more items of `itemsize` bytes (binary) or words (ASCII) there are."""
        return ((len(self.data) if self.binary else len(self.tokens)) - self.at) // itemsize

    def take(self, count: int, kind: str, what: str, size: int = 8) -> np.ndarray:
        """The next `count` numbers: kind "i" integers, "f" floats, `size` bytes each when
        binary; refuses a count beyond what the section holds."""
        room = self.left(size if self.binary else 1)
        if not 0 <= count <= room:
            raise self.fail(f"declares {count} {what}, the section holds {max(room, 0)} more "
                            "numbers (truncated or corrupt?)")
        if self.binary:
            dtype = np.dtype(f"{self.order}{'f' if kind == 'f' else 'i'}{size}")
            out = np.frombuffer(self.data, dtype, count, self.at)
            self.at += count * size
            return out.astype(np.float64 if kind == "f" else np.int64)
        words = self.tokens[self.at:self.at + count]
        self.at += count
        try:
            return np.array(words).astype(np.float64 if kind == "f" else np.int64)
        except (ValueError, OverflowError):
            bad = next(w for w in words if not _number(w, kind))
            raise self.fail(f"expected {'a number' if kind == 'f' else 'an integer'} in "
                            f"{what}, got {bad[:20].decode(errors='replace')!r}") from None

    def ints(self, count: int, what: str, size: int = 8) -> list[int]:
        return self.take(count, "i", what, size).tolist()

    def done(self) -> None:
        """Refuses bytes or tokens left over after the declared content."""
        rest = self.data[self.at:].strip() if self.binary else self.tokens[self.at:]
        if len(rest):
            raise self.fail("more content than its counts declare (corrupt counts?)")


def _number(word: bytes, kind: str) -> bool:
    try:
        float(word) if kind == "f" else int(word)
        return True
    except ValueError:
        return False


def read_gmsh(path: Path, data: bytes) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """Points (n,3) and cell blocks [(kind, (cells, nodes) vertex indices)] of a .msh file."""
    sections = _sections(path, data)
    version, binary, order = _format(path, sections.get("MeshFormat"))
    if "Nodes" not in sections:
        raise MeshFileError(path, "has no $Nodes section")
    nodes, elements = (_nodes41, _elements41) if version == "4.1" else (_nodes22, _elements22)
    c = _Cursor(path, "Nodes", sections["Nodes"], binary, order)
    tags, points = nodes(c)
    c.done()
    blocks = []  # a file of nodes alone is a cloud of free particles
    if "Elements" in sections:
        c = _Cursor(path, "Elements", sections["Elements"], binary, order)
        blocks = elements(c)
        c.done()
    return points, _indexed(path, tags, blocks)


def _sections(path: Path, data: bytes) -> dict[str, bytes]:
    """The content of each section (the first of each name) between `$Name` and `$EndName`."""
    found, at = {}, 0
    while (match := SECTION.search(data, at)) is not None:
        name = match.group(1)
        end = data.find(b"$End" + name, match.end())
        if end < 0:
            raise MeshFileError(path, f"section ${name.decode(errors='replace')} has no "
                                f"$End{name.decode(errors='replace')} (truncated?)")
        found.setdefault(name.decode(errors="replace"), data[match.end():end])
        at = end + 4 + len(name)
    if not found:
        raise MeshFileError(path, "not a Gmsh file: no $MeshFormat ... $EndMeshFormat section")
    return found


def _format(path: Path, content: bytes | None) -> tuple[str, bool, str]:
    """(version "2.2" or "4.1", binary, byte order "<" or ">") of $MeshFormat; the data
    size (of size_t in 4.1 binary) must be 8."""
    if content is None:
        raise MeshFileError(path, "not a Gmsh file: no $MeshFormat section")
    line, _, rest = content.partition(b"\n")
    words = line.split()
    if len(words) != 3 or words[0] not in (b"2.2", b"4.1") or words[1] not in (b"0", b"1"):
        raise MeshFileError(path, f"$MeshFormat: expected version 2.2 or 4.1, file type 0 or 1 "
                            f"and a data size, got {line[:40].decode(errors='replace')!r} "
                            "(convert other versions with gmsh -format msh41)")
    binary = words[1] == b"1"
    if words[2] != b"8":
        raise MeshFileError(path, f"$MeshFormat: expected data size 8, got "
                            f"{words[2][:20].decode(errors='replace')}")
    order = "<"
    if binary:  # the integer 1, written in the file's byte order
        if rest[:4] not in (b"\1\0\0\0", b"\0\0\0\1"):
            raise MeshFileError(path, "$MeshFormat: binary without the integer 1 that gives the "
                                "byte order")
        order = "<" if rest[:4] == b"\1\0\0\0" else ">"
    return words[0].decode(), binary, order


def _nodes41(c: _Cursor) -> tuple[np.ndarray, np.ndarray]:
    blocks, total, _, _ = c.ints(4, "header numbers")
    tags, points = [], []
    for _ in range(blocks):
        dim, _, parametric = c.ints(3, "block header numbers", 4)
        count = c.ints(1, "block header numbers")[0]
        if not 0 <= dim <= 3:
            raise c.fail(f"a node block declares entity dimension {dim}, expected 0 to 3")
        tags.append(c.take(count, "i", "node tags"))
        width = 3 + (dim if parametric else 0)
        points.append(c.take(count * width, "f", "coordinates").reshape(count, width)[:, :3])
    return _joined(c, total, "nodes", tags, points)


def _elements41(c: _Cursor) -> list[tuple[str, np.ndarray]]:
    blocks, total, _, _ = c.ints(4, "header numbers")
    out, read = [], 0
    for _ in range(blocks):
        _, _, kind = c.ints(3, "block header numbers", 4)
        count = c.ints(1, "block header numbers")[0]
        name, nodes = _cell(c, kind)
        rows = c.take(count * (1 + nodes), "i", f"{name} elements")
        out.append((name, rows.reshape(count, 1 + nodes)[:, 1:]))
        read += count
    if read != total:
        raise c.fail(f"declares {total} elements, its blocks hold {read}")
    return out


def _nodes22(c: _Cursor) -> tuple[np.ndarray, np.ndarray]:
    total = c.ints(1, "the node count", 4)[0] if not c.binary else _ascii_count(c)
    per = 28 if c.binary else 4  # bytes of (int32 tag, 3 doubles), or words of a line
    if not 0 <= total <= c.left(per):
        raise c.fail(f"declares {total} nodes, the section holds {max(c.left(per), 0)} "
                     "(truncated or corrupt?)")
    if c.binary:
        rows = np.frombuffer(c.data, np.dtype([("tag", f"{c.order}i4"), ("x", f"{c.order}f8", 3)]),
                             total, c.at)
        c.at += 28 * total
        return _joined(c, total, "nodes", [rows["tag"].astype(np.int64)],
                       [rows["x"].astype(np.float64)])
    rows = c.take(4 * total, "f", "node lines (tag x y z)").reshape(total, 4)
    tags = rows[:, 0].astype(np.int64)
    if not np.array_equal(tags, rows[:, 0]):
        raise c.fail("expected integer node tags in the first column")
    return _joined(c, total, "nodes", [tags], [rows[:, 1:]])


def _elements22(c: _Cursor) -> list[tuple[str, np.ndarray]]:
    total = c.ints(1, "the element count", 4)[0] if not c.binary else _ascii_count(c)
    if not 0 <= total <= c.left(4):
        raise c.fail(f"declares {total} elements, the section holds {max(c.left(4), 0)} numbers")
    rows: dict[str, list[np.ndarray]] = {}
    read = 0
    while read < total:
        if c.binary:  # a block: (type, count, numTags), then count x (tag, tags, nodes)
            kind, count, ntags = c.ints(3, "element block headers", 4)
            name, nodes = _cell(c, kind)
            if ntags < 0:
                raise c.fail(f"a block declares {ntags} tags per element")
            block = c.take(count * (1 + ntags + nodes), "i", f"{name} elements", 4)
            rows.setdefault(name, []).append(block.reshape(count, 1 + ntags + nodes)[:, 1 + ntags:])
        else:  # one element: tag type numTags tags... nodes...
            _, kind, ntags = c.ints(3, "an element line", 4)
            name, nodes = _cell(c, kind)
            if ntags < 0:
                raise c.fail(f"an element declares {ntags} tags")
            c.take(ntags, "i", "element tags", 4)
            rows.setdefault(name, []).append(c.take(nodes, "i", f"{name} nodes", 4)[None])
            count = 1
        read += count
    if read != total:
        raise c.fail(f"declares {total} elements, its blocks hold {read}")
    return [(name, np.concatenate(group)) for name, group in rows.items()]


def _ascii_count(c: _Cursor) -> int:
    """The ASCII count line that opens a binary 2.2 section."""
    line, newline, _ = c.data.partition(b"\n")
    if not newline or not line.strip().isdigit():
        raise c.fail(f"expected a count line, got {line[:20].decode(errors='replace')!r}")
    c.at = len(line) + 1
    return int(line)


def _cell(c: _Cursor, kind: int) -> tuple[str, int]:
    if kind not in CELLS:
        raise c.fail(f"element type {kind} is not a Gmsh element type msim knows (1 to 19)")
    return CELLS[kind]


def _joined(c: _Cursor, total: int, what: str, tags: list, points: list
            ) -> tuple[np.ndarray, np.ndarray]:
    tags = np.concatenate(tags) if tags else np.zeros(0, np.int64)
    points = np.concatenate(points) if points else np.zeros((0, 3))
    if len(tags) != total:
        raise c.fail(f"declares {total} {what}, its blocks hold {len(tags)}")
    if len(np.unique(tags)) != len(tags):
        raise c.fail("a node tag appears twice")
    return tags, points


def _indexed(path: Path, tags: np.ndarray, blocks: list) -> list[tuple[str, np.ndarray]]:
    """The blocks with node tags replaced by 0-based indices into the nodes as read."""
    order = np.argsort(tags, kind="stable")
    ordered = tags[order]
    out = []
    for name, rows in blocks:
        at = np.searchsorted(ordered, rows).clip(0, max(len(tags) - 1, 0))
        known = ordered[at] == rows if len(tags) else np.zeros(rows.shape, bool)
        if not known.all():
            raise MeshFileError(path, f"$Elements: a {name} element refers to node "
                                f"{rows[~known][0]}, which $Nodes does not define")
        out.append((name, order[at]))
    return out
