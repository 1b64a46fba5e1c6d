"""Write the notebooks in notebooks/ from the cell sources below (no outputs).

Run `python tools/make_notebooks.py` after editing a notebook's cells here, so that the
committed notebooks stay reviewable as plain Python in one place. Cell ids are derived from
the notebook and the cell's position, so regenerating an unchanged notebook changes nothing.
"""

from pathlib import Path
from textwrap import dedent

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent.parent / "notebooks"


def md(source: str) -> tuple[str, str]:
    """A markdown cell from an indented triple-quoted string."""
    return "md", dedent(source).strip()


def py(source: str) -> tuple[str, str]:
    """A code cell from an indented triple-quoted string."""
    return "py", dedent(source).strip()


def notebook(name: str, cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """A notebook from (kind, source) pairs; kind is "md" or "py"; ids are name-index."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    stem = name.split(".")[0]
    nb.cells = [(new_markdown_cell if kind == "md" else new_code_cell)(src, id=f"{stem}-{i}")
                for i, (kind, src) in enumerate(cells)]
    return nb


QUICKSTART = [
    md("""
        # msim quick start

        Build a cloth, step it, watch its energy, branch a state into several integrators and
        draw the result. Everything is in SI units: metres, kilograms, seconds, newtons, joules.
    """),
    py("""
        %matplotlib inline
        import numpy as np
        import msim
        import msim.plot

        mesh = msim.mesh.cloth_grid(20, 20, size=1.0)  # 1 m x 1 m, structural + shear + bending
        sim = msim.System(mesh.vertices, mesh.edges, mass=0.01, stiffness=1000.0, fixed=[0, 19])
        sim
    """),
    md("""
        The six integrators and their options (`msim.METHODS` holds the options with their
        defaults and documentation):
    """),
    py("""
        for name, summary in msim.methods.SUMMARY.items():
            print(f"{name:<20} {summary}")
            for option, spec in msim.METHODS[name].items():
                print(f"{'':<22}{option} = {spec.default!r}")
    """),
    md("One step returns a `StepInfo`; `energy()` is in joules."),
    py("""
        info = sim.step(1e-3, method="symplectic_euler")
        print(info)
        sim.energy()
    """),
    md("""
        `simulate` records frames and energies; `progress=True` shows a bar. With symplectic
        Euler at h = 1 ms the cloth swings: kinetic and gravitational energy trade places and
        the total stays flat (this integrator has no numerical damping, and the cloth none set).
    """),
    py("""
        state = sim.get_state()
        traj = sim.simulate(1500, 1e-3, "symplectic_euler", record_every=15, progress=True)
        fig = msim.plot.energy(traj, terms=("kinetic", "spring", "gravity", "total"))
        fig.axes[0].set_title("20x20 cloth pinned at two corners, falling from horizontal");
    """),
    py("""msim.plot.frame(traj.positions[-1], mesh.faces, fixed=[0, 19], title="after 1.5 s");"""),
    md("""
        Branch the saved state into every method and compare them over the same second of
        simulated time, each at a step it is meant for: the explicit methods at 1 ms, the
        implicit ones at 1/30 s (a video frame). Explicit Euler diverges even at 1 ms: that is
        the lesson (notebook 02 shows why).
    """),
    py("""
        sim.set_state(state)
        dt = {"explicit_euler": 1e-3, "symplectic_euler": 1e-3, "implicit_euler": 1 / 30,
              "linearized_implicit": 1 / 30, "fms": 1 / 30, "xpbd": 1 / 30}
        steps = {method: round(1.0 / h) for method, h in dt.items()}
        table = msim.compare(sim, list(dt), steps=steps, dt=dt)
        table
    """),
    md("""
        Reading the table (energies in joules, `s_per_step` in seconds):

        * `diverged` is the step at which explicit Euler blew up; the other runs finished.
        * `relative_drift` is the change of total energy over the largest kinetic plus spring
          energy of the run: about 0 for symplectic Euler, clearly negative for the implicit
          methods, which damp the motion numerically (more at larger h).
        * `max_strain` is the largest relative stretch of a spring, (l - r) / r. XPBD with its
          default 10 sweeps per step at h = 1/30 leaves this stiff cloth far too stretched:
          a stiff cloth needs more sweeps or substeps (notebook 02).
        * `iterations` is the mean inner iteration count (conjugate gradient iterations for the
          linearised method, local-global iterations for FMS, sweeps for XPBD).
    """),
]

FMS_CONVERGENCE = [
    md(r"""
        # Fast mass-spring convergence (Liu et al. 2013, Fig. 2)

        Liu, Bargteil, O'Brien and Kavan, *Fast Simulation of Mass-Spring Systems* (SIGGRAPH
        Asia 2013), plot the relative error of the implicit Euler potential

        $$\frac{g(x_i) - g(x^*)}{g(x_0) - g(x^*)},\qquad g(x) = \tfrac{1}{2h^2}\|x - y\|_M^2 + E(x),$$

        against the iteration count $i$ of one time step ($h = 1/30$ s) on a curtain of 6561
        vertices, for their local-global solver (FMS) and for Newton's method. Here we repeat it
        on an 81 x 81 curtain (6561 vertices too) with msim's `fms`, its Chebyshev (Wang 2015)
        and Anderson (Peng et al. 2018) accelerations, msim's Newton (`implicit_euler`) and an
        independent SciPy Newton solver. All iterations start from $x_0 = y$, the paper's
        choice. The experiment itself is `msim.experiments.fms_convergence`;
        `tests/test_convergence.py` runs the same code on a 21 x 21 curtain and checks what the
        maths predicts.
    """),
    py("""
        %matplotlib inline
        import time

        import matplotlib.pyplot as plt
        import numpy as np

        from msim.reference import fms as ref_fms
        from msim.experiments import PAPER_FMS, PAPER_NEWTON_ONE, fms_convergence, gust_curtain

        H, ITERATIONS = 1 / 30, 1000
    """),
    md(r"""
        ## The curtain

        `gust_curtain(81)`: a 1 m x 1 m cloth (`cloth_grid(81, 81, plane="xy")`, structural,
        shear and bending springs, k = 1000 N/m, 1 kg in all) hanging at rest, pinned along its
        top row, just hit by an out-of-plane gust ($v_z = \sin(\pi u)\,w$ m/s, $u$ across and
        $w$ down the curtain). A curtain hanging at rest in its own plane is nearly a fixed point
        of FMS and converges in a few iterations; the gust makes the step bend the cloth, the
        regime where FMS's constant matrix differs most from the true Hessian. The paper's
        curtain, its stiffness, masses and the frame it measured are not given, so the numbers
        are not expected to match, only the shape.

        The SciPy Newton solver of `msim.reference.fms` (exact Hessian, sparse direct solve,
        line search) is run to a gradient 1e-10 times its starting value; its converged g is
        the g* every curve below is measured against.
    """),
    py("""
        sim = gust_curtain(81)
        problem = ref_fms.step_problem(sim, H)
        tol = 1e-10 * np.linalg.norm(problem.gradient(problem.y))  # [N]
        start = time.perf_counter()
        _, newton_history = ref_fms.newton(problem, tol=tol)
        print(f"SciPy Newton: {len(newton_history) - 1} iterations, "
              f"{time.perf_counter() - start:.1f} s")
        g_star = newton_history[-1]
    """),
    md("""
        ## Relative error against iterations

        Two Newton curves, both with a backtracking line search and the same tolerance: the
        SciPy reference, which tries the exact Hessian first, and msim's own `implicit_euler`
        with its default `spd="clamp"`: the lateral stiffness of compressed springs is dropped
        so that the matrix stays positive definite (with `spd="none"` msim meets an indefinite
        matrix on this curtain and says so). They agree while the error is large; near the
        answer the clamped Hessian is no longer the exact one, so msim's Newton converges
        linearly there instead of quadratically and needs about 20 iterations instead of 6.
    """),
    py("""
        runs = {
            "FMS": {"method": "fms"},
            "FMS + Chebyshev": {"method": "fms", "acceleration": "chebyshev"},
            "FMS + Anderson": {"method": "fms", "acceleration": "anderson"},
            "Newton (msim implicit_euler)": {"method": "implicit_euler", "tol": tol,
                                             "line_search": True},
            "Newton (SciPy reference)": lambda s, dt, k: newton_history,
        }
        start = time.perf_counter()
        errors = fms_convergence(sim, H, ITERATIONS, runs, g_star)
        print(f"{time.perf_counter() - start:.1f} s")

        fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
        for label, e in errors.items():
            i = np.arange(len(e))
            keep = e > 0
            newton = label.startswith("Newton")
            ax.loglog(i[keep][1:], e[keep][1:], marker="o" if newton else None,
                      linestyle="--" if "SciPy" in label else "-", label=label)
        ax.loglog(list(PAPER_FMS), list(PAPER_FMS.values()), "k*",
                  label="Liu 2013, FMS (their curtain)")
        ax.loglog([1], [PAPER_NEWTON_ONE], "kx", label="Liu 2013, one Newton iteration")
        ax.set_xlabel("iterations in one step (h = 1/30 s)")
        ax.set_ylabel("relative error in g")
        ax.set_title("81 x 81 curtain hit by a gust")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1))
        ax.grid(True, which="both", alpha=0.3)
        plt.show()
    """),
    py("""
        print(f"{'iterations':>10} {'paper FMS':>10} " + " ".join(f"{k:>16}" for k in errors))
        for i, paper in PAPER_FMS.items():
            row = [errors[k][i] if i < len(errors[k]) else 0.0 for k in errors]
            print(f"{i:>10} {paper:>10.3g} " + " ".join(f"{v:>16.3g}" for v in row))
    """),
    md("""
        ## Reading the plot

        * **Shape.** As in the paper, plain FMS falls fast in its first iterations and then
          converges linearly (a straight line on a log-linear plot, slowly bending down on this
          log-log one), every iteration lowering g (it is a block coordinate descent: both the
          local and the global step minimise exactly). Newton converges quadratically and
          reaches round-off in a handful of iterations, while ten FMS iterations are already
          more accurate than one Newton iteration, the paper's point that FMS wins whenever a
          visually plausible answer (a relative error of 1e-2 to 1e-3) suffices, each FMS
          iteration costing one back-substitution instead of a factorisation.
        * **Level.** Our curtain converges much faster than the paper's (their 0.361 / 0.196 /
          0.0402 / 2.98e-4 after 1 / 10 / 100 / 1000 iterations): their scene, stiffness and
          frame differ and are not published in enough detail; the rate of FMS depends on how
          far the step is from a stretch-only deformation (how much bending and rotation it
          contains) and on h^2 k / m.
        * **Acceleration.** Chebyshev (rho = 0.99, ten plain iterations first, so its curve
          leaves plain FMS's at iteration 10) and Anderson (window 5, falling back to the plain
          iterate whenever the mixed one would raise g) both cut the iterations needed for a
          given accuracy once the linear phase starts; Anderson keeps g monotone by
          construction, Chebyshev does not guarantee it.
    """),
]

COMPARED = [
    md("""
        # Integrators compared

        One 15 x 15 cloth, 1 m x 1 m (structural, shear and bending springs, k = 1000 N/m,
        10 g per vertex, pinned at two corners, starting horizontal at rest) and all six
        methods: where each is stable, what it does to the energy, how stiff it really is, and
        what it costs.
    """),
    py("""
        %matplotlib inline
        import time

        import matplotlib.pyplot as plt
        import numpy as np
        from IPython.display import HTML

        import msim
        import msim.plot
        from msim.compare import max_strain, spring_strain

        MESH = msim.mesh.cloth_grid(15, 15)
        METHODS = list(msim.METHODS)  # explicit, symplectic, implicit, linearised, fms, xpbd


        def make(**kwargs):
            return msim.System(MESH.vertices, MESH.edges, mass=0.01, stiffness=1000.0,
                               fixed=[0, 14], **kwargs)
    """),
    md("""
        ## Stability against the time step

        The stiffest mode of this cloth has omega ~ 2 sqrt(4 k / m) ~ 1300 rad/s. On a single
        mode, one explicit Euler step multiplies the amplitude by sqrt(1 + (omega h)^2) > 1, so
        explicit Euler diverges at *every* h, only more slowly at small h; symplectic Euler
        keeps the amplitude bounded while h < 2 / omega ~ 1.5 ms and blows up beyond; implicit
        Euler multiplies it by 1 / sqrt(1 + (omega h)^2) < 1 and is stable at every h.

        Each cell is one run from the same start: green stable, amber a total energy change
        above 10 % of the energy in motion (the number is that relative change), red diverged
        (the step at which it did). The two explicit methods are cheap, so they run for 1 s,
        long enough for explicit Euler's slow growth at h = 0.1 ms to show; the others run for
        0.2 s.
    """),
    py("""
        dts = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 1 / 30]
        duration = {m: 1.0 if m.endswith("explicit_euler") or m == "symplectic_euler" else 0.2
                    for m in METHODS}
        rows = msim.stability(make, METHODS, dts, duration=duration)
        fig = msim.plot.stability_map(rows)
        fig.set_size_inches(8, 4.5)
    """),
    md("""
        What to see: explicit Euler is red everywhere; symplectic Euler is green up to 1 ms and
        red from 3 ms, just as 2 / omega predicts; the implicit methods never diverge, but
        their drift is negative and grows with h: they lose energy (numerical damping). XPBD's
        drift at h = 1/30 is *positive*: with 10 sweeps per step it leaves the springs
        overstretched, and the spring energy measured with the true k is large (see below).
    """),
    md("""
        ## Energy at each method's natural step

        Every method at a step it is meant for, for 1.5 s. XPBD runs with 100 substeps of one
        sweep each (Macklin et al. 2019, *Small steps in physics simulation*), the way it is
        used for stiff cloth.
    """),
    py("""
        natural = {"explicit_euler": (1e-4, {}), "symplectic_euler": (1e-3, {}),
                   "implicit_euler": (1 / 30, {}), "linearized_implicit": (1 / 30, {}),
                   "fms": (1 / 30, {}), "xpbd": (1 / 30, {"substeps": 100, "iterations": 1})}
        runs = [make().simulate(round(1.5 / dt), dt, m, record_every=max(1, round(0.02 / dt)),
                                on_divergence="stop", **options)
                for m, (dt, options) in natural.items()]
        fig = msim.plot.energy(runs)
        fig.set_size_inches(8, 5)
        ax = fig.axes[0]
        ax.set_ylim(-15, 3)
        ax.set_ylabel("total energy [J] (0 at the start)")
        ax.set_title("total energy; explicit Euler leaves the plot at the top");
    """),
    md("""
        What to see:

        * **Explicit Euler** gains energy until it diverges, even at h = 0.1 ms: its amplitude
          grows by sqrt(1 + (omega h)^2) every step, so the stiff modes explode eventually.
        * **Symplectic Euler** keeps the total energy in a narrow band around its start (it
          conserves a nearby "shadow" energy exactly), as long as h < 2 / omega.
        * **Implicit Euler** loses energy: each step damps a mode by 1 / sqrt(1 + (omega h)^2),
          which at h = 1/30 kills the stiff (stretching) modes at once and slowly damps even the
          swinging. This numerical damping is what buys its stability. msim's `implicit_euler`
          runs one Newton iteration per step by default (the course convention), the
          linearised method one linear solve on velocities, and FMS 10 local-global iterations
          on the same potential: all three damp by similar amounts, but differently, since none
          of them solves the step exactly.
        * **FMS**'s total energy is not even monotone: it loses energy faster than Newton at
          first, then regains about 1 J between 0.8 s and 1.2 s. Only an exactly solved step
          with a convex energy is guaranteed to lose energy; springs are not convex (they
          buckle under compression), and 10 iterations leave the step unconverged.
        * **XPBD** with small substeps loses the least energy of the methods at h = 1/30:
          each substep is a short implicit step, whose numerical damping scales with its
          length.
    """),
    md("""
        ## Is XPBD's stiffness independent of the iteration count?

        Macklin et al. (2016) give each spring a compliance 1/k and a Lagrange multiplier, so
        that the answer XPBD *converges to* does not depend on the iteration count or the
        step (plain PBD gets stiffer with every extra iteration). With too few sweeps it has
        not converged, and the cloth is softer than k. Below, the cloth hangs until it is
        nearly at rest (ether damping 3 /s, 3 s at h = 1/30), and we measure the largest
        strain against the number of Gauss-Seidel sweeps per step. Implicit Euler solved by
        Newton to a tight tolerance gives the equilibrium of springs of stiffness k.
    """),
    py("""
        def strain_at_rest(method, **options):
            sim = make(damping=3.0)
            sim.simulate(90, 1 / 30, method, **options)
            return max_strain(sim)


        exact = strain_at_rest("implicit_euler", max_iterations=20, tol=1e-6)
        sweeps = [3, 10, 30, 100, 300]
        xpbd = [strain_at_rest("xpbd", iterations=n) for n in sweeps]
        substeps = strain_at_rest("xpbd", iterations=1, substeps=100)

        fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
        ax.loglog(sweeps, xpbd, "o-", label="XPBD, sweeps per step")
        ax.axhline(substeps, color="tab:green", linestyle=":",
                   label="XPBD, 100 substeps x 1 sweep")
        ax.axhline(exact, color="k", linestyle="--", label="implicit Euler (Newton, converged)")
        ax.set_xlabel("Gauss-Seidel sweeps per step (h = 1/30 s)")
        ax.set_ylabel("largest spring strain at rest")
        ax.set_title("the hanging cloth at rest")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        plt.show()
        print(f"exact {exact:.4f}; XPBD " +
              ", ".join(f"{n} sweeps {s:.4f}" for n, s in zip(sweeps, xpbd)) +
              f"; 100 substeps {substeps:.4f}")
    """),
    md("""
        What to see: with 3 or 10 sweeps the cloth hangs 10 to 30 times more stretched than
        springs of stiffness k would allow; the strain falls as the sweeps grow, and with about
        300 sweeps (or with 100 substeps of one sweep, three times cheaper) it is within a few
        percent of the implicit Euler answer. So XPBD's stiffness does not depend on the
        iteration count *once it has converged*; a stiff cloth with few sweeps is simply
        unconverged. The last percent does not vanish: each XPBD update uses the spring
        directions of that moment and drops the geometric-stiffness term of the Newton step,
        so even many sweeps land near, not exactly on, the implicit Euler solution.
    """),
    md("""
        ## How stiff is the cloth while it moves?

        Strain (l - r) / r of every spring after 1 s at h = 1/30, on one colour scale: FMS with
        its default 10 iterations against XPBD with 10 sweeps in one step. FMS is never far
        from the stiffness k (its iterations minimise the same potential as implicit Euler);
        XPBD with so few sweeps on 1000+ springs is far from converged, so the cloth stretches.
    """),
    py("""
        fig = plt.figure(figsize=(11, 4.5), layout="constrained")
        frames = {}
        for method in ["fms", "xpbd"]:
            sim = make()
            sim.simulate(30, 1 / 30, method, iterations=10)
            frames[method] = sim.positions, spring_strain(sim)
        limit = max(np.abs(strain).max() for _, strain in frames.values())
        for k, (method, (x, strain)) in enumerate(frames.items()):
            ax = fig.add_subplot(1, 2, k + 1, projection="3d")
            msim.plot.frame(x, None, MESH.edges, strain=strain, strain_limit=limit,
                            fixed=[0, 14], ax=ax,
                            title=f"{method}, 10 iterations: max strain {strain.max():.2f}")
    """),
    md("""
        ## What it costs, in the style of the course report's table

        The report (seed 000) timed explicit Euler (1000 steps) at 0.057 s, Newton (at most
        100 iterations) at 5.5 s and FMS with 10 / 100 / 1000 iterations at 0.008 / 0.08 /
        0.8 s, on its own mesh and machine. Here are the same runs on this 15 x 15 cloth in
        msim (one step at h = 1/30 for Newton and FMS). The machines and meshes differ, so
        compare the ratios, not the numbers. FMS's cost grows linearly with its iterations (one
        prefactored back-substitution each), as in the report. Newton refactors a 3n x 3n
        matrix at every iteration, but here it stops once converged (the last column), so it
        costs less than 1000 FMS iterations; the report's Newton, capped at 100 iterations,
        was 7 times slower than them (it does not say how many iterations it ran).
    """),
    py("""
        def seconds(method, steps=1, dt=1 / 30, **options):
            sim = make()
            start = time.perf_counter()
            infos = [sim.step(dt, method, **options) for _ in range(steps)]
            return time.perf_counter() - start, infos[-1].iterations


        rows = [("explicit Euler, 1000 steps (h = 0.1 ms)", 0.057,
                 seconds("explicit_euler", 1000, 1e-4)),
                ("Newton, max 100 iterations", 5.5,
                 seconds("implicit_euler", max_iterations=100, tol=1e-8, line_search=True))]
        rows += [(f"FMS, {n} iterations", report, seconds("fms", iterations=n))
                 for n, report in [(10, 0.008), (100, 0.08), (1000, 0.8)]]
        print(f"{'run':<40} {'report [s]':>10} {'msim [s]':>10} {'iterations':>10}")
        for name, report, (ours, iterations) in rows:
            print(f"{name:<40} {report:>10.3g} {ours:>10.3g} {iterations:>10}")
    """),
    md("## The motion\n\nTwenty frames of FMS at h = 1/30 (1.3 s)."),
    py("""
        traj = make().simulate(40, 1 / 30, "fms", record_every=2)
        anim = msim.plot.animate(traj, MESH.faces)
        plt.close(anim._fig)
        HTML(anim.to_jshtml())
    """),
]

COLLISIONS = [
    md("""
        # Collisions

        Penalty methods (explicit, symplectic, implicit and linearised implicit Euler) feel a
        contact energy k_c/2 depth^2, so a vertex sinks a little into what it touches, by about
        its load / k_c at rest; projection methods (FMS, XPBD) put vertices back onto the
        surface, so nothing ever ends up inside. Spheres are touched at `contact_scale` (1.1)
        times their radius, seed 001's margin.
    """),
    py("""
        %matplotlib inline
        import matplotlib.pyplot as plt
        import numpy as np

        import msim
        import msim.plot
        from msim import scenes


        def sphere_wire(ax, centre, radius):
            u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 24), np.linspace(0, np.pi, 12))
            x = centre[0] + radius * np.cos(u) * np.sin(v)
            y = centre[1] + radius * np.cos(v)
            z = centre[2] + radius * np.sin(u) * np.sin(v)
            ax.plot_wireframe(x, z, y, color="grey", linewidth=0.4)  # msim.plot draws y up
    """),
    md("## A cloth dropped on a sphere, two ways"),
    py("""
        fig = plt.figure(figsize=(10, 4), layout="constrained")
        depths = {}
        for k, method in enumerate(["implicit_euler", "xpbd"]):
            scene = scenes.cloth_on_sphere(n=15)
            sim = scene.system
            centre, radius = sim.spheres[0, :3], sim.spheres[0, 3]
            depth, energy = [], []
            for _ in range(45):
                sim.step(1 / 30, method)
                gap = np.linalg.norm(sim.positions - centre, axis=1).min()
                depth.append(sim.contact_scale * radius - gap)
                energy.append(sim.energy()["collision"])
            depths[method] = (np.array(depth), np.array(energy))
            ax = fig.add_subplot(1, 2, k + 1, projection="3d")
            msim.plot.frame(sim.positions, scene.faces, ax=ax, title=f"{method}, t = 1.5 s")
            sphere_wire(ax, centre, radius)
    """),
    md("""
        Depth below the contact surface (s r) and the contact energy over time: the penalty
        method sinks by a fraction of a millimetre and stores energy in the contact; XPBD
        projects, so its depth is zero to rounding and its contact energy vanishes. (FMS
        projects once after its iterations; its global step cannot see the sphere, and at
        h = 1/30 this stiff cloth, which falls 9 cm into the sphere in one step, is thrown off
        by that projection: use h = 1/120 with FMS here, or XPBD.)
    """),
    py("""
        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5), layout="constrained")
        t = np.arange(1, 46) / 30
        for method, (depth, energy) in depths.items():
            a.plot(t, 1e3 * np.maximum(depth, 0), label=method)
            b.plot(t, energy, label=method)
        a.set_xlabel("time [s]"); a.set_ylabel("depth [mm]"); a.legend()
        b.set_xlabel("time [s]"); b.set_ylabel("collision energy [J]"); b.legend();
    """),
    md("""
        ## A jelly cube and a pushed curtain

        The cube is a tetrahedral lattice (every tet edge a spring) dropped on an edge onto the
        ground; the curtain is pushed by a sphere that a script moves 0.5 m/s along z before
        every step.
    """),
    py("""
        fig = plt.figure(figsize=(10, 4), layout="constrained")
        cube = scenes.jelly_cube(n=4)
        cube.run(45, "implicit_euler")
        msim.plot.frame(cube.system.positions, cube.faces,
                        ax=fig.add_subplot(1, 2, 1, projection="3d"),
                        title="jelly cube at rest (implicit Euler)")
        push = scenes.pushed_cloth(n=15)
        push.run(36, "fms")
        ax = fig.add_subplot(1, 2, 2, projection="3d")
        msim.plot.frame(push.system.positions, push.faces, fixed=range(15), ax=ax,
                        title="curtain pushed by a sphere (FMS), t = 1.2 s")
        sphere_wire(ax, push.system.spheres[0, :3], push.system.spheres[0, 3])
    """),
    md("""
        ## Coulomb friction

        A vertex sliding on the ground at v0 loses mu g h of speed each step, so it stops after
        v0^2 / (2 mu g) less half a step's travel.
    """),
    py("""
        g, v0, h = 9.81, 1.0, 1 / 120
        print(f"{'mu':>4} {'predicted [m]':>14} {'fms [m]':>9} {'implicit_euler [m]':>19}")
        for mu in (0.2, 0.4, 0.8):
            travel = []
            for method in ("fms", "implicit_euler"):
                sim = msim.System([[0.0, 0.0, 0.0]], np.zeros((0, 2), int),
                                  planes=[[0, 1, 0, 0]], friction=mu, contact_stiffness=1e5)
                sim.step(h, method)
                sim.velocities = [[v0, 0, 0]]
                start = sim.positions[0, 0]
                sim.simulate(120, h, method)
                travel.append(sim.positions[0, 0] - start)
            print(f"{mu:>4} {v0**2 / (2 * mu * g) - v0 * h / 2:>14.4f} {travel[0]:>9.4f} "
                  f"{travel[1]:>19.4f}")
    """),
]

NOTEBOOKS = {"01_quickstart.ipynb": QUICKSTART, "02_integrators_compared.ipynb": COMPARED,
             "03_fms_convergence.ipynb": FMS_CONVERGENCE, "04_collisions.ipynb": COLLISIONS}

if __name__ == "__main__":
    for name, cells in NOTEBOOKS.items():
        nbformat.write(notebook(name, cells), HERE / name)
        print("wrote", HERE / name)
