"""What msim's file readers share: their error type and the bound on how far a file may inflate."""

from __future__ import annotations

import os

# A file may hold compressed data (zlib, lzma): its content may inflate past its size, but a
# reader allocates at most this many times the file's size, plus a fixed allowance, before it
# refuses. Deflate cannot exceed ~1032:1, but data msim writes (floats of a simulation) does
# not compress by more than a few; 64x leaves room for runs with many resting vertices.
INFLATION = 64
ALLOWANCE = 16 * 2**20  # [bytes]


def inflation_limit(file_size: int) -> int:
    """The most bytes [B] a reader lets a file of `file_size` bytes expand to."""
    return INFLATION * file_size + ALLOWANCE


class FileError(ValueError):
    """A file whose content a reader refuses: `path` names the file, `problem` says what is
    wrong with it. Pickles (crosses process pools) with both."""

    def __init__(self, path, problem: str) -> None:
        super().__init__(os.fspath(path), problem)
        self.path, self.problem = os.fspath(path), problem

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


class MeshFileError(FileError):
    """`msim.io.read_mesh` could not read a file as a mesh: `path` names the file, `problem`
    what is wrong (malformed or truncated content, an index out of range, a non-finite
    coordinate, an XML entity or DTD, a declared size beyond what the file can hold, ...)."""


class TrajectoryFileError(FileError):
    """`Trajectory.load` could not read a file as a Trajectory: `path` names the file,
    `problem` what is wrong (not a zip, a member missing or truncated, a wrong dtype or shape,
    a non-finite value, a declared size beyond what the file can hold, ...)."""
