"""Write the notebooks in notebooks/ from the cell sources below (no outputs).

Run `python tools/make_notebooks.py` after editing a notebook's cells here, so that the
committed notebooks stay reviewable as plain Python in one place.
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent.parent / "notebooks"


def notebook(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """A notebook from (kind, source) pairs; kind is "md" or "py"."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src)
                for kind, src in cells]
    return nb


QUICKSTART = [
    ("md", "# msim quick start\n\nBuild a cloth, step it, watch its energy, branch a state "
           "into several integrators and draw the result."),
    ("py", "%matplotlib inline\nimport numpy as np\nimport msim\nimport msim.plot\n\n"
           "mesh = msim.mesh.cloth_grid(20, 20, size=1.0)\n"
           "sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1000.0, "
           "fixed=[0, 19])\nsim"),
    ("md", "One step returns a `StepInfo`; `energy()` is in joules."),
    ("py", "info = sim.step(1e-3, method=\"symplectic_euler\")\nprint(info)\nsim.energy()"),
    ("md", "`simulate` records frames and energies; `progress=True` shows a bar."),
    ("py", "state = sim.get_state()\n"
           "traj = sim.simulate(1500, 1e-3, \"symplectic_euler\", record_every=15, "
           "progress=True)\nmsim.plot.energy(traj, terms=(\"kinetic\", \"spring\", "
           "\"gravity\", \"total\"));"),
    ("py", "msim.plot.frame(traj.positions[-1], mesh.faces, fixed=[0, 19], "
           "title=\"after 1.5 s\");"),
    ("md", "Branch the saved state into every method and compare, each at a step it is "
           "meant for: the explicit methods at 1 ms (explicit Euler still diverges: that is the "
           "lesson), the implicit ones at 1/30 s."),
    ("py", "sim.set_state(state)\n"
           "dt = {\"explicit_euler\": 1e-3, \"symplectic_euler\": 1e-3, \"implicit_euler\": 1 / 30,\n"
           "      \"linearized_implicit\": 1 / 30, \"fms\": 1 / 30, \"xpbd\": 1 / 30}\n"
           "table = msim.compare(sim, list(dt), steps=30, dt=dt)\ntable"),
]

FMS_CONVERGENCE = [
    ('md', "# Fast mass-spring convergence (Liu et al. 2013, Fig. 2)\n\nLiu, Bargteil, O'Brien and Kavan, *Fast Simulation of Mass-Spring Systems* (SIGGRAPH Asia 2013),\nplot the relative error of the implicit Euler potential\n\n$$\\frac{g(x_i) - g(x^*)}{g(x_0) - g(x^*)},\\qquad g(x) = \\tfrac{1}{2h^2}\\|x - y\\|_M^2 + E(x),$$\n\nagainst the iteration count $i$ of one time step ($h = 1/30$ s) on a curtain of 6561 vertices,\nfor their local-global solver (FMS) and for Newton's method. Here we repeat it on an 81 x 81\ncurtain (6561 vertices too) with msim's `fms`, its Chebyshev (Wang 2015) and Anderson\n(Peng et al. 2018) accelerations, and a SciPy Newton solver. All iterations start from\n$x_0 = y$, the paper's choice. The experiment itself is `msim.experiments.fms_convergence`;\n`tests/test_convergence.py` runs the same code on a 21 x 21 curtain and checks what the maths\npredicts."),
    ('py', 'import time\n\nimport matplotlib.pyplot as plt\nimport numpy as np\n\nfrom benchmarks import ref_fms\nfrom msim.experiments import PAPER_FMS, PAPER_NEWTON_ONE, fms_convergence, gust_curtain\n\nH, ITERATIONS = 1 / 30, 1000'),
    ('md', '## The curtain\n\n`gust_curtain(81)`: a 1 m x 1 m cloth (`cloth_grid(81, 81, plane="xy")`, structural, shear and\nbending springs, k = 1000 N/m, 1 kg in all) hanging at rest, pinned along its top row, just hit\nby an out-of-plane gust ($v_z = \\sin(\\pi u)\\,w$ m/s, $u$ across and $w$ down the curtain).\nA curtain hanging at rest in its own plane is nearly a fixed point of FMS and converges in a few\niterations; the gust makes the step bend the cloth, the regime where FMS\'s constant matrix\ndiffers most from the true Hessian. The paper\'s curtain, its stiffness, masses and the frame it\nmeasured are not given, so the numbers are not expected to match, only the shape.'),
    ('py', 'sim = gust_curtain(81)\nproblem = ref_fms.step_problem(sim, H)\ntol = 1e-10 * np.linalg.norm(problem.gradient(problem.y))  # [N]\nstart = time.perf_counter()\n_, newton_history = ref_fms.newton(problem, tol=tol)\nprint(f"SciPy Newton: {len(newton_history) - 1} iterations, {time.perf_counter() - start:.1f} s")\ng_star = newton_history[-1]'),
    ('md', '## Relative error against iterations\n\nNewton\'s curves: msim\'s own `implicit_euler` (exact Hessian, `spd="none"`, with a line\nsearch) and the independent SciPy reference solver of `benchmarks/ref_fms.py`, whose\nconverged g is the g* every curve is measured against.'),
    ('py', 'runs = {\n    "FMS": {"method": "fms"},\n    "FMS + Chebyshev": {"method": "fms", "acceleration": "chebyshev"},\n    "FMS + Anderson": {"method": "fms", "acceleration": "anderson"},\n    "Newton (msim implicit_euler)": {"method": "implicit_euler", "tol": tol,\n                                     "line_search": True},\n    "Newton (SciPy reference)": lambda s, dt, k: newton_history,\n}\nstart = time.perf_counter()\nerrors = fms_convergence(sim, H, ITERATIONS, runs, g_star)\nprint(f"{time.perf_counter() - start:.1f} s")\n\nfig, ax = plt.subplots(figsize=(6, 4))\nfor label, e in errors.items():\n    i = np.arange(len(e))\n    keep = e > 0\n    ax.loglog(i[keep][1:], e[keep][1:], marker="o" if label.startswith("Newton") else None, label=label)\nax.loglog(list(PAPER_FMS), list(PAPER_FMS.values()), "k*", label="Liu 2013, FMS (their curtain)")\nax.loglog([1], [PAPER_NEWTON_ONE], "kx", label="Liu 2013, one Newton iteration")\nax.set_xlabel("iterations")\nax.set_ylabel("relative error in g")\nax.legend(fontsize=8)\nax.grid(True, which="both", alpha=0.3)\nplt.show()'),
    ('py', 'print(f"{\'iterations\':>10} {\'paper FMS\':>10} " + " ".join(f"{k:>16}" for k in errors))\nfor i, paper in PAPER_FMS.items():\n    row = [errors[k][i] if i < len(errors[k]) else 0.0 for k in errors]\n    print(f"{i:>10} {paper:>10.3g} " + " ".join(f"{v:>16.3g}" for v in row))'),
    ('md', "## Reading the plot\n\n* **Shape.** As in the paper, plain FMS falls fast in its first iterations and then converges\n  linearly (a straight line on a log-linear plot, slowly bending down on this log-log one),\n  every iteration lowering g (it is a block coordinate descent: both the local and the global\n  step minimise exactly). Newton converges quadratically and reaches round-off in a handful of\n  iterations, while ten FMS iterations are already more accurate than one Newton iteration, the\n  paper's point that FMS wins whenever a visually plausible answer (a relative error of 1e-2\n  to 1e-3) suffices, each FMS iteration costing one back-substitution instead of a\n  factorisation.\n* **Level.** Our curtain converges much faster than the paper's (their 0.361 / 0.196 / 0.0402 /\n  2.98e-4 after 1 / 10 / 100 / 1000 iterations): their scene, stiffness and frame differ and are\n  not published in enough detail; the rate of FMS depends on how far the step is from a\n  stretch-only deformation (how much bending and rotation it contains) and on h^2 k / m.\n* **Acceleration.** Chebyshev (rho = 0.99, ten plain iterations first) and Anderson (window 5,\n  falling back to the plain iterate whenever the mixed one would raise g) both cut the\n  iterations needed for a given accuracy once the linear phase starts; Anderson keeps g\n  monotone by construction, Chebyshev does not guarantee it."),
]

COMPARED = [
    ("md", "# Integrators compared\n\nOne 15x15 cloth (structural, shear and bending springs, "
           "k = 1000 N/m, 10 g per vertex, pinned at two corners) and all six methods: where "
           "each is stable, what it does to the energy, how stiff it really is, and what it costs."),
    ("py", "%matplotlib inline\nimport time\n\nimport matplotlib.pyplot as plt\nimport numpy as np\n"
           "from IPython.display import HTML\n\nimport msim\nimport msim.plot\n\n"
           "MESH = msim.mesh.cloth_grid(15, 15)\n\n\ndef make():\n"
           "    return msim.System(MESH.vertices, MESH.edges, mass=0.01, stiffness=1000.0, "
           "fixed=[0, 14])\n\n\nMETHODS = sorted(msim.METHODS)"),
    ("md", "## Stability against the time step\n\nThe stiffest mode of this cloth has "
           "omega ~ 2 sqrt(4 k / m) ~ 1300 rad/s. Explicit Euler multiplies that mode's amplitude "
           "by sqrt(1 + (omega h)^2) > 1 every step, so it diverges at any h (slowly at small h); "
           "symplectic Euler is stable while h < 2 / omega ~ 1.5 ms; the implicit methods are "
           "stable at every step shown. Green: stable; amber: energy drift above 10 % of the "
           "energy in motion; red: diverged (the step is printed)."),
    ("py", "dts = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 1 / 30]\n"
           "rows = msim.stability(make, METHODS, dts, duration=0.2)\n"
           "msim.plot.stability_map(rows);"),
    ("md", "## Energy at each method's natural step\n\nSymplectic Euler keeps the total energy "
           "within a bounded band; implicit Euler, its linearised version and FMS (which "
           "minimises the same incremental potential) dissipate it, more at larger h: numerical "
           "damping that makes them stable. XPBD with too few iterations is softer than k, so the "
           "energy measured with the true k is not conserved either."),
    ("py", "natural = {\"explicit_euler\": 1e-4, \"symplectic_euler\": 1e-3, "
           "\"implicit_euler\": 1 / 30,\n           \"linearized_implicit\": 1 / 30, \"fms\": 1 / 30, "
           "\"xpbd\": 1 / 30}\nruns = [make().simulate(int(round(1.5 / dt)), dt, m, "
           "record_every=max(1, int(round(0.02 / dt))),\n                          "
           "on_divergence=\"stop\") for m, dt in natural.items()]\n"
           "fig = msim.plot.energy(runs)\nfig.axes[0].set_ylim(-25, 5)\n"
           "fig.axes[0].set_title(\"total energy (explicit Euler leaves the plot)\");"),
    ("md", "## How stiff is the cloth really?\n\nStrain (l - r) / r of every spring after 1 s at "
           "h = 1/30: FMS with 10 iterations against XPBD with 10 iterations in one step. XPBD's "
           "stiffness does not depend on the iteration count (compliance 1/k), but with so few "
           "Gauss-Seidel sweeps on 1000+ springs it is far from converged, so the cloth stretches."),
    ("py", "fig = plt.figure(figsize=(10, 4), layout=\"constrained\")\n"
           "for k, method in enumerate([\"fms\", \"xpbd\"]):\n"
           "    sim = make()\n    sim.simulate(30, 1 / 30, method, iterations=10)\n"
           "    x = sim.positions\n"
           "    length = np.linalg.norm(x[MESH.edges[:, 0]] - x[MESH.edges[:, 1]], axis=1)\n"
           "    strain = (length - sim.rest_lengths) / sim.rest_lengths\n"
           "    ax = fig.add_subplot(1, 2, k + 1, projection=\"3d\")\n"
           "    msim.plot.frame(x, None, MESH.edges, strain=strain, fixed=[0, 14], ax=ax,\n"
           "                    title=f\"{method}: max strain {strain.max():.2f}\")"),
    ("md", "## What it costs, in the style of the course report's table\n\nThe report (seed "
           "000) timed explicit Euler (1000 steps) at 0.057 s, Newton (at most 100 iterations) "
           "at 5.5 s and FMS with 10 / 100 / 1000 iterations at 0.008 / 0.08 / 0.8 s on its own "
           "mesh and machine; here the same runs on this 15x15 cloth in msim. The machines and "
           "meshes differ, so compare the ratios, not the numbers."),
    ("py", "def seconds(method, steps=1, dt=1 / 30, **options):\n"
           "    sim = make()\n    start = time.perf_counter()\n"
           "    for _ in range(steps):\n        sim.step(dt, method, **options)\n"
           "    return time.perf_counter() - start\n\n\nrows = [\n"
           "    (\"explicit Euler, 1000 steps\", 0.057, seconds(\"explicit_euler\", 1000, 1e-4)),\n"
           "    (\"Newton, max 100 iterations\", 5.5,\n"
           "     seconds(\"implicit_euler\", max_iterations=100, tol=1e-10, line_search=True)),\n"
           "] + [(f\"FMS, {n} iterations\", report, seconds(\"fms\", iterations=n))\n"
           "     for n, report in [(10, 0.008), (100, 0.08), (1000, 0.8)]]\n"
           "print(f\"{'run':<28} {'report [s]':>10} {'msim [s]':>10}\")\n"
           "for name, report, ours in rows:\n    print(f\"{name:<28} {report:>10.3g} {ours:>10.3g}\")"),
    ("md", "## The motion\n\nTwenty frames of FMS at h = 1/30."),
    ("py", "traj = make().simulate(40, 1 / 30, \"fms\", record_every=2)\n"
           "anim = msim.plot.animate(traj, MESH.faces)\nplt.close(anim._fig)\nHTML(anim.to_jshtml())"),
]

COLLISIONS = [
    ("md", "# Collisions\n\nPenalty methods (explicit, symplectic, implicit and linearised "
           "implicit Euler) feel a contact energy k_c/2 depth^2, so a vertex sinks a little into "
           "what it touches, by about its load / k_c at rest; projection methods (FMS, XPBD) put "
           "vertices back onto the surface, so nothing ever ends up inside. Spheres are touched "
           "at `contact_scale` (1.1) times their radius, seed 001's margin."),
    ("py", "%matplotlib inline\nimport matplotlib.pyplot as plt\nimport numpy as np\n\n"
           "import msim\nimport msim.plot\nfrom msim import scenes\n\n\n"
           "def sphere_wire(ax, centre, radius):\n"
           "    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 24), np.linspace(0, np.pi, 12))\n"
           "    x = centre[0] + radius * np.cos(u) * np.sin(v)\n"
           "    y = centre[1] + radius * np.cos(v)\n    z = centre[2] + radius * np.sin(u) * np.sin(v)\n"
           "    ax.plot_wireframe(x, z, y, color=\"grey\", linewidth=0.4)  # msim.plot draws y up"),
    ("md", "## A cloth dropped on a sphere, two ways"),
    ("py", "fig = plt.figure(figsize=(10, 4), layout=\"constrained\")\ndepths = {}\n"
           "for k, method in enumerate([\"implicit_euler\", \"xpbd\"]):\n"
           "    scene = scenes.cloth_on_sphere(n=15)\n    sim = scene.system\n"
           "    centre, radius = sim.spheres[0, :3], sim.spheres[0, 3]\n    depth, energy = [], []\n"
           "    for _ in range(45):\n        sim.step(1 / 30, method)\n"
           "        gap = np.linalg.norm(sim.positions - centre, axis=1).min()\n"
           "        depth.append(sim.contact_scale * radius - gap)\n"
           "        energy.append(sim.energy()[\"collision\"])\n"
           "    depths[method] = (np.array(depth), np.array(energy))\n"
           "    ax = fig.add_subplot(1, 2, k + 1, projection=\"3d\")\n"
           "    msim.plot.frame(sim.positions, scene.faces, ax=ax, title=f\"{method}, t = 1.5 s\")\n"
           "    sphere_wire(ax, centre, radius)"),
    ("md", "Depth below the contact surface (s r) and the contact energy over time: the penalty "
           "method sinks by a fraction of a millimetre and stores energy in the contact; XPBD "
           "projects, so its depth is zero to rounding and its contact energy vanishes. (FMS "
           "projects once after its iterations; its global step cannot see the sphere, and at "
           "h = 1/30 this stiff cloth, which falls 9 cm into the sphere in one step, is thrown "
           "off by that projection: use h = 1/120 with FMS here, or XPBD.)"),
    ("py", "fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5), layout=\"constrained\")\n"
           "t = np.arange(1, 46) / 30\nfor method, (depth, energy) in depths.items():\n"
           "    a.plot(t, 1e3 * np.maximum(depth, 0), label=method)\n    b.plot(t, energy, label=method)\n"
           "a.set_xlabel(\"time [s]\"); a.set_ylabel(\"depth [mm]\"); a.legend()\n"
           "b.set_xlabel(\"time [s]\"); b.set_ylabel(\"collision energy [J]\"); b.legend();"),
    ("md", "## A jelly cube and a pushed curtain\n\nThe cube is a tetrahedral lattice "
           "(every tet edge a spring) dropped on an edge onto the ground; the curtain is pushed by "
           "a sphere that a script moves 0.5 m/s along z before every step."),
    ("py", "fig = plt.figure(figsize=(10, 4), layout=\"constrained\")\n"
           "cube = scenes.jelly_cube(n=4)\ncube.run(45, \"implicit_euler\")\n"
           "msim.plot.frame(cube.system.positions, cube.faces, ax=fig.add_subplot(1, 2, 1, "
           "projection=\"3d\"),\n                title=\"jelly cube at rest (implicit Euler)\")\n"
           "push = scenes.pushed_cloth(n=15)\npush.run(36, \"fms\")\n"
           "ax = fig.add_subplot(1, 2, 2, projection=\"3d\")\n"
           "msim.plot.frame(push.system.positions, push.faces, fixed=range(15), ax=ax,\n"
           "                title=\"curtain pushed by a sphere (FMS), t = 1.2 s\")\n"
           "sphere_wire(ax, push.system.spheres[0, :3], push.system.spheres[0, 3])"),
    ("md", "## Coulomb friction\n\nA vertex sliding on the ground at v0 loses mu g h of speed "
           "each step, so it stops after v0^2 / (2 mu g) less half a step's travel."),
    ("py", "g, v0, h = 9.81, 1.0, 1 / 120\nprint(f\"{'mu':>4} {'predicted [m]':>14} "
           "{'fms [m]':>9} {'implicit_euler [m]':>19}\")\n"
           "for mu in (0.2, 0.4, 0.8):\n    travel = []\n"
           "    for method in (\"fms\", \"implicit_euler\"):\n"
           "        sim = msim.System([[0.0, 0.0, 0.0]], np.zeros((0, 2), int), planes=[[0, 1, 0, 0]],\n"
           "                          friction=mu, contact_stiffness=1e5)\n"
           "        sim.step(h, method)\n        sim.velocities = [[v0, 0, 0]]\n"
           "        start = sim.positions[0, 0]\n        sim.simulate(120, h, method)\n"
           "        travel.append(sim.positions[0, 0] - start)\n"
           "    print(f\"{mu:>4} {v0**2 / (2 * mu * g) - v0 * h / 2:>14.4f} {travel[0]:>9.4f} "
           "{travel[1]:>19.4f}\")"),
]

NOTEBOOKS = {"01_quickstart.ipynb": QUICKSTART, "02_integrators_compared.ipynb": COMPARED,
             "03_fms_convergence.ipynb": FMS_CONVERGENCE, "04_collisions.ipynb": COLLISIONS}

if __name__ == "__main__":
    for name, cells in NOTEBOOKS.items():
        nbformat.write(notebook(cells), HERE / name)
        print("wrote", HERE / name)
