"""Systems the tests share: the linear oscillator and the pinned cloth, spring lengths, each
integrator's closed form of a fall under a constant acceleration, and a mesh's topological
distances (the ring self-contact leaves without energy).

pytest puts this folder on sys.path (rootdir-less test folder, default "prepend" import mode),
so a test module imports them with `from builders import cloth`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

import msim


def lengths(mesh: msim.mesh.Mesh) -> np.ndarray:
    """(m,) length |x_i - x_j| [m] of each edge of `mesh`."""
    d = mesh.vertices[mesh.edges[:, 0]] - mesh.vertices[mesh.edges[:, 1]]
    return np.linalg.norm(d, axis=1)


def triangle_hops(faces: np.ndarray, nv: int) -> np.ndarray:
    """(nv, nv) the fewest triangle edges between each two of nv vertices (inf across pieces), by
    breadth-first search over the faces' edges (scipy): a pair of primitives lies within the
    ring r when some vertex of one is at most r from some vertex of the other."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    edges = msim.mesh.unique_edges(msim.mesh.cell_edges("triangle", np.asarray(faces)))
    graph = coo_matrix((np.ones(len(edges)), tuple(edges.T)), shape=(nv, nv))
    return shortest_path(graph, directed=False, unweighted=True)


def oscillator(k: float = 100.0, m: float = 1.0, stretch: float = 0.01) -> msim.System:
    """Vertex 0 fixed at the origin, vertex 1 on the x axis at 1 + stretch; no gravity.

    Along the axis the spring force is exactly -k u (u = stretch), a linear oscillator with
    omega = sqrt(k/m).
    """
    vertices = np.array([[0.0, 0.0, 0.0], [1.0 + stretch, 0.0, 0.0]])
    return msim.System(vertices, [[0, 1]], mass=m, stiffness=k, rest_lengths=[1.0],
                       fixed=[0], gravity=(0, 0, 0))


def cloth(n: int = 8, *, stiffness: float = 100.0, mass: float = 0.01, damping: float = 0.0,
          fixed: Sequence[int] | None = None, jitter: float = 0.0, speed: float = 0.0,
          seed: int = 0, jitter_rest: bool = False) -> msim.System:
    """An n x n, 1 m cloth_grid lying flat in the xz plane, pinned at the two corners of its
    first row (or at `fixed`), springs of `stiffness` [N/m], vertices of `mass` [kg].

    jitter [m]: every coordinate moved by jitter * N(0, 1) drawn from default_rng(seed); the
    springs keep the grid's rest lengths (the cloth starts strained) unless jitter_rest, when
    the jittered shape is the rest shape. speed [m/s]: velocities speed * N(0, 1), drawn after
    the jitter from the same generator.
    """
    mesh = msim.mesh.cloth_grid(n, n, size=1.0)
    rng = np.random.default_rng(seed)
    jittered = mesh.vertices + jitter * rng.standard_normal(mesh.vertices.shape)
    sim = msim.System(jittered if jitter_rest else mesh.vertices, mesh.edges, mass=mass,
                      stiffness=stiffness, damping=damping,
                      fixed=[0, n - 1] if fixed is None else fixed)
    if jitter:
        sim.positions = jittered
    if speed:
        sim.velocities = speed * rng.standard_normal(mesh.vertices.shape)
    return sim


def rounding(method: str, n: int, x: float, h: float) -> tuple[float, float]:
    """The rounding n steps of h of `method` may leave against a closed form, in positions of
    magnitude x [m] and in velocities [m/s]. Positions: a few spacings of x per step.
    Velocities: methods that take v from position differences lose a spacing of x over the
    step each step (implicit midpoint and BDF2 up to 4 (z - x_t)/h; XPBD (x - x0)/hs in each
    of its S default substeps of hs = h/S). XPBD's later substeps carry those velocity
    roundings into x, so its position rounding grows with the square of n S."""
    substeps = msim.METHODS["xpbd"]["substeps"].default if method == "xpbd" else 1
    updates, spacing = n * substeps, np.spacing(x)
    position = updates**2 * spacing if method == "xpbd" else 64 * n * spacing
    return position, 4 * updates * spacing / (h / substeps)


def fall(method: str, n: int) -> float:
    """c such that n steps of h under a constant acceleration a (gravity plus F/m, no springs)
    move a vertex from (x_0, v_0) to x_0 + n h v_0 + c h^2 a, with v_n = v_0 + n h a.

    Explicit Euler moves with the old velocity (sum of k for k < n); RK4, velocity Verlet and
    implicit midpoint are exact (n^2 / 2); BDF2's recurrence x_{k+1} - 4/3 x_k + 1/3 x_{k-1} =
    2/3 h v_{k+1} from an implicit Euler first step adds 3/4 (1 - 3^-n) (its roots are 1 and
    1/3); every other method moves with the new velocity (sum of k for k <= n), XPBD in each
    of its S default substeps of h/S (sum of k for k <= n S, over S^2).
    """
    if method == "explicit_euler":
        return n * (n - 1) / 2
    if method in ("rk4", "velocity_verlet", "implicit_midpoint"):
        return n * n / 2
    if method == "bdf2":
        return n * n / 2 + 0.75 * (1 - 3.0**-n)
    if method == "xpbd":
        substeps = msim.METHODS["xpbd"]["substeps"].default
        return n * (n * substeps + 1) / (2 * substeps)
    return n * (n + 1) / 2
