/* registry.c: the one table of methods, solvers of g, workspaces and step options, and the
 * constructor defaults. Every fact about a method or solver lives in its row here: its step
 * or minimise function, flags, stability limit, default iteration cap and the options it
 * reads; every fact about an option: its ms_opt field, type, allowed range, choice names (in
 * enum order), and for each method that takes it, its public name, default and
 * documentation. The binding parses a step's options against it (names, types, choices,
 * ranges, and the options and choices each solver of g takes) and exports it
 * (msim._core.methods(), solvers()) for msim.METHODS, the stability limits of msim.scenes and
 * the README's method table. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* iteration caps, substeps and delays: loops count in int, so caps stay well inside it */
#define MS_MAX_COUNT 1000000000
/* anderson history columns: each holds two (n,3) arrays */
#define MS_MAX_WINDOW 100

/* choice names, indexed by their enum values */
static const char *const spd_names[] = {
    [MS_SPD_CLAMP] = "clamp", [MS_SPD_SHIFT] = "shift", [MS_SPD_PROJECT] = "project",
    [MS_SPD_NONE] = "none",   [MS_NSPD] = NULL,
};
static const char *const solver_names[] = {
    [MS_SOLVE_CG] = "cg",
    [MS_SOLVE_JACOBI] = "jacobi",
    [MS_SOLVE_DIRECT] = "direct",
    [MS_NSOLVE] = NULL,
};
static const char *const minimizer_names[] = {
    [MS_MIN_NEWTON] = "newton", [MS_MIN_FMS] = "fms", [MS_MIN_LBFGS] = "lbfgs",
    [MS_MIN_VBD] = "vbd",       [MS_NMIN] = NULL,
};
static const char *const pin_names[] = {
    [MS_PIN_ELIMINATE] = "eliminate", [MS_PIN_PENALTY] = "penalty", [MS_NPIN] = NULL};
static const char *const accel_names[] = {
    [MS_ACCEL_NONE] = "none",
    [MS_ACCEL_CHEBYSHEV] = "chebyshev",
    [MS_ACCEL_ANDERSON] = "anderson",
    [MS_NACCEL] = NULL,
};
static const char *const start_names[] = {
    [MS_START_LOWEST] = "lowest",
    [MS_START_INERTIAL] = "inertial",
    [MS_START_SETTLED] = "settled",
    [MS_START_PREVIOUS] = "previous",
    [MS_START_EXTRAPOLATED] = "extrapolated",
    [MS_NSTART] = NULL,
};
static const char *const sweep_names[] = {
    [MS_SWEEP_SEQUENTIAL] = "sequential", [MS_SWEEP_COLOURED] = "coloured", [MS_NSWEEP] = NULL};

/* the fields of ms_opt: name and offset, type, range [lo, hi] (hi excluded when hi_open),
 * choices */
#define FIELD(f) #f, offsetof(ms_opt, f)
const ms_opt_field ms_opt_fields[MS_NOPT] = {
    [MS_OPT_ITERATIONS] = {FIELD(iterations), MS_INT, 1, MS_MAX_COUNT},
    [MS_OPT_TOL] = {FIELD(tol), MS_REAL, 0, INFINITY},
    [MS_OPT_SPD] = {FIELD(spd), MS_CHOICE, 0, MS_NSPD - 1, 0, spd_names},
    [MS_OPT_SHIFT] = {FIELD(shift), MS_REAL, 0, INFINITY},
    [MS_OPT_LINE_SEARCH] = {FIELD(line_search), MS_FLAG, 0, 1},
    [MS_OPT_SOLVER] = {FIELD(solver), MS_CHOICE, 0, MS_NSOLVE - 1, 0, solver_names},
    [MS_OPT_MINIMIZER] = {FIELD(minimizer), MS_CHOICE, 0, MS_NMIN - 1, 0, minimizer_names},
    [MS_OPT_PIN] = {FIELD(pin), MS_CHOICE, 0, MS_NPIN - 1, 0, pin_names},
    [MS_OPT_PIN_WEIGHT] = {FIELD(pin_weight), MS_REAL, 0, INFINITY},
    [MS_OPT_ACCELERATION] = {FIELD(acceleration), MS_CHOICE, 0, MS_NACCEL - 1, 0, accel_names},
    [MS_OPT_RHO] = {FIELD(rho), MS_REAL, 0, 1, 1},
    [MS_OPT_CHEBYSHEV_DELAY] = {FIELD(chebyshev_delay), MS_INT, 0, MS_MAX_COUNT},
    [MS_OPT_RELAX] = {FIELD(relax), MS_REAL, 0, 2, 1},
    [MS_OPT_WINDOW] = {FIELD(window), MS_INT, 1, MS_MAX_WINDOW},
    [MS_OPT_START] = {FIELD(start), MS_CHOICE, 0, MS_NSTART - 1, 0, start_names},
    [MS_OPT_SUBSTEPS] = {FIELD(substeps), MS_INT, 1, MS_MAX_COUNT},
    [MS_OPT_XPBD_DAMPING] = {FIELD(xpbd_damping), MS_REAL, 0, INFINITY},
    [MS_OPT_SWEEP] = {FIELD(sweep), MS_CHOICE, 0, MS_NSWEEP - 1, 0, sweep_names},
};
#undef FIELD

/* documentation shared by several methods */
#define SPD_DOC                                                                                 \
  "how the spring Hessian is kept positive definite: 'clamp' drops the negative lateral part "  \
  "(1 - L/l < 0) of compressed springs; 'shift' adds `shift` * I; 'project' clips each spring " \
  "block's eigenvalues (k and k(1 - L/l) twice) at 0, which for a two-vertex spring gives "     \
  "exactly the clamp; 'none' keeps the exact Hessian and raises NotPositiveDefiniteError when " \
  "the matrix is indefinite"
#define SHIFT_DOC                                                                                \
  "spd='shift': eps [N/m] added to the diagonal of the stiffness matrix (a spring of stiffness " \
  "eps from every free vertex to where it is); the default, 10% of System's default stiffness "  \
  "1000 N/m, cancels the lateral curvature -0.1 k of a default spring compressed by 9%: scale "  \
  "it with your stiffness"
#define START_DOC                                                                               \
  "the iterations' initial guess: 'inertial' y = x_t + h v + h^2 (g + F/m), F the external "    \
  "force (the answer when springs, contact and friction vanish); 'settled' y with each vertex " \
  "in contact moved to the minimiser of its own share of g, its neighbours held (one "          \
  "block-Jacobi step of g over them: it slides or sticks as Coulomb says); 'previous' x_t; "    \
  "'extrapolated' x_t + h v (where the published code of Liu et al. 2013 starts); 'lowest' "    \
  "whichever of settled, extrapolated and previous has the lowest g. g and its minimiser do "   \
  "not depend on it; a solver stopped early does. Every solver but Newton without its line "    \
  "search never ends above the g it starts from, and g(x_t) is the total energy at the "        \
  "step's start, so from 'lowest' a body at rest never gains energy, while y, inside any "      \
  "collider it rests on, holds the penalty energy of a whole step's fall. In "                  \
  "implicit_midpoint and bdf2, x_t, h and v are the base point, effective step h' and base "    \
  "velocity of their g"

/* the options of FMS, the fms method's and the implicit methods' with solver='fms'; the
 * implicit methods' acceleration and rho are also VBD's */
// clang-format off
#define FMS_PARAMS(ACCEL_DOC, RHO_DOC)                                                   \
  {"pin", MS_OPT_PIN, MS_PIN_ELIMINATE,                                                  \
   "fixed vertices in FMS's matrix: eliminated from the system, or unknowns held by a "  \
   "penalty pin_weight/2 |x - x0|^2 (they are still put back exactly after the step)"},  \
  {"pin_weight", MS_OPT_PIN_WEIGHT, 1e8,                                                 \
   "penalty stiffness of pin='penalty' [N/m]; a pinned vertex drifts by about its "      \
   "support force / pin_weight during the iterations"},                                  \
  {"acceleration", MS_OPT_ACCELERATION, MS_ACCEL_NONE, ACCEL_DOC},                       \
  {"rho", MS_OPT_RHO, 0.99, RHO_DOC},                                                    \
  {"chebyshev_delay", MS_OPT_CHEBYSHEV_DELAY, 10,                                        \
   "FMS's chebyshev: plain iterations before acceleration starts"},                      \
  {"relax", MS_OPT_RELAX, 1, "FMS's chebyshev: under-relaxation gamma"},                 \
  {"window", MS_OPT_WINDOW, 5,                                                           \
   "anderson: number of past iterates mixed (m); solver='lbfgs': curvature pairs kept (m)"}
#define FMS_ACCEL_DOC                                                                    \
  "Chebyshev semi-iteration (Wang 2015) or Anderson mixing with an energy safeguard "    \
  "(Peng 2018)"
#define FMS_RHO_DOC "chebyshev: spectral radius estimate of plain FMS"
// clang-format on

/* each method's options: public name, field, default (a choice's index, a flag's 0 or 1) */
static const ms_param implicit_params[] = {
    {"solver", MS_OPT_MINIMIZER, MS_MIN_NEWTON,
     "the minimiser of g: 'newton' (CHOLMOD on 3x3 blocks, spd, shift and line_search "
     "options), 'fms' (Liu et al. 2013 local-global iterations on one prefactored matrix, "
     "pin and acceleration options), 'lbfgs' (Liu et al. 2017 L-BFGS with that matrix as "
     "initial Hessian and an Armijo line search, window option), 'vbd' (vertex block "
     "descent, Chen et al. 2024: Gauss-Seidel 3x3 Newton steps per vertex (spring Hessians "
     "clamped) over a vertex colouring, each safeguarded so that g never increases; threads "
     "update a colour in parallel; acceleration and rho options)"},
    {"iterations", MS_OPT_ITERATIONS, MS_BY_SOLVER,
     "the solver's iterations at most; None: its own default, 1 for newton (the course "
     "convention), 10 for the others"},
    {"max_iterations", MS_OPT_ITERATIONS, MS_BY_SOLVER,
     "Newton's earlier name of `iterations` (give one of the two)"},
    {"tol", MS_OPT_TOL, 0,
     "stop when |grad g| over free vertices is below tol [N], the same measure for every "
     "solver; 0: run all iterations"},
    {"spd", MS_OPT_SPD, MS_SPD_CLAMP, SPD_DOC},
    {"shift", MS_OPT_SHIFT, 100, SHIFT_DOC},
    {"line_search", MS_OPT_LINE_SEARCH, 1,
     "newton: backtracking Armijo line search on g along the Newton step, so that g never "
     "increases (off: the full Newton step of the course notes, which at an impact or a stick "
     "can overshoot and gain energy)"},
    {"start", MS_OPT_START, MS_START_LOWEST, START_DOC},
    FMS_PARAMS("solver='fms': " FMS_ACCEL_DOC "; solver='vbd': 'chebyshev' only, the "
               "extrapolation x = omega (x_sweep - x_prev2) + x_prev2 after each sweep of Chen "
               "et al. 2024 (Alg. 1), with which g may rise; newton ignores it",
               "chebyshev: spectral radius estimate of the plain iteration, read by solvers "
               "'fms' (0.99 suits it) and 'vbd' (0.9 to 0.95 on msim's cloths; 0.99 needs more "
               "sweeps on a small cloth and more backtracking per sweep on a large one)"),
};
static const ms_param linearized_params[] = {
    {"solver", MS_OPT_SOLVER, MS_SOLVE_CG,
     "'cg': conjugate gradients with a block-Jacobi preconditioner; 'jacobi': block-Jacobi "
     "iteration, which converges when the spring blocks are positive semidefinite (any spd but "
     "'none') but slows to a crawl once h^2 k / m >> 1 (hundreds of iterations past h omega ~ "
     "1; with spd='none' it may diverge); 'direct': CHOLMOD"},
    {"max_iterations", MS_OPT_ITERATIONS, 500, "iterations of 'cg' or 'jacobi' at most"},
    {"tol", MS_OPT_TOL, 1e-8,
     "stop 'cg' or 'jacobi' at this relative residual |b - A dv| / |b|; 0: run max_iterations"},
    {"spd", MS_OPT_SPD, MS_SPD_CLAMP, SPD_DOC},
    {"shift", MS_OPT_SHIFT, 100, SHIFT_DOC},
};
static const ms_param fms_params[] = {
    {"iterations", MS_OPT_ITERATIONS, 10, "local-global iterations per step (cap)"},
    {"tol", MS_OPT_TOL, 0, "stop when |grad g| < tol [N]; 0: run all iterations"},
    FMS_PARAMS(FMS_ACCEL_DOC, FMS_RHO_DOC),
    {"start", MS_OPT_START, MS_START_LOWEST, START_DOC},
};
static const ms_param xpbd_params[] = {
    {"iterations", MS_OPT_ITERATIONS, 1, "Gauss-Seidel sweeps per substep"},
    {"substeps", MS_OPT_SUBSTEPS, 10,
     "substeps per step (lambda reset each); the default ten substeps of one sweep cost what "
     "one step of ten sweeps does and converge far further (Macklin, Storey, Lu, Terdiman, "
     "Chentanez, Jeschke and Mueller 2019, \"Small steps in physics simulation\"): a sweep "
     "left unconverged holds the cloth stretched, and the next step turns that stretch into "
     "motion, so ten sweeps in one step gain energy on a falling cloth"},
    {"xpbd_damping", MS_OPT_XPBD_DAMPING, 0,
     "Macklin's constraint damping beta [N s/m] per spring"},
    {"sweep", MS_OPT_SWEEP, MS_SWEEP_SEQUENTIAL,
     "the order of the projections in a sweep: 'sequential', Gauss-Seidel in the springs' "
     "order; 'coloured', Gauss-Seidel colour by colour over a greedy colouring of the springs "
     "(no two of a colour share a vertex, as in Fratarcangeli et al. 2016), whose projections "
     "threads share; like any reordering of the springs, it changes where a given number of "
     "sweeps ends"},
};

#define PARAMS(p) p, sizeof(p) / sizeof(p[0])
const ms_method_def ms_methods[MS_NMETHOD] = {
    [MS_EXPLICIT_EULER] = {"explicit_euler",
                           "x += h v(t); v += h a(x(t)). Unstable for stiff springs, on purpose.",
                           NULL, 0, ms_explicit_euler,
                           MS_SELF_PREPARED | MS_IMPULSE_FRICTION | MS_UNDAMPED_UNSTABLE, 2.0},
    [MS_SYMPLECTIC_EULER] = {"symplectic_euler",
                             "v += h a(x(t)); x += h v(t+h). Stable below h ~ 2/omega_max.", NULL,
                             0, ms_symplectic_euler, MS_SELF_PREPARED | MS_IMPULSE_FRICTION, 2.0},
    [MS_IMPLICIT_EULER] =
        {"implicit_euler",
         "Minimise g(x) = |x - y|_M^2/(2h^2) + E(x) by the chosen solver (Newton with CHOLMOD "
         "on 3x3 blocks and a line search by default); v = (x - x_t)/h.",
         PARAMS(implicit_params), ms_implicit_euler, 0, INFINITY},
    [MS_LINEARIZED_IMPLICIT] = {"linearized_implicit",
                                "Baraff-Witkin: one solve (M - h^2 K) dv = h (f + h K v); "
                                "v += dv; x += h v.",
                                PARAMS(linearized_params), ms_linearized_implicit,
                                MS_SAMPLED_BARRIER, INFINITY},
    [MS_FMS] = {"fms",
                "Liu et al. 2013 local-global minimisation of the same g with one prefactored "
                "scalar Cholesky (refactored only when dt, masses, stiffness, the fixed set or "
                "the vertices in contact change, and in each step with self-contact pairs "
                "pressing, whose curvature it bounds pair by pair); optional Chebyshev or "
                "Anderson acceleration.",
                PARAMS(fms_params), ms_fms, 0, INFINITY},
    [MS_XPBD] = {"xpbd",
                 "Macklin et al. 2016: predict, then Gauss-Seidel spring projection with "
                 "compliance 1/k and per-spring multipliers; stiffness independent of the "
                 "iteration count.",
                 PARAMS(xpbd_params), ms_xpbd, 0, INFINITY},
    [MS_RK4] = {"rk4",
                "Classical fourth-order Runge-Kutta on (x, v): four force evaluations, "
                "x += h (k1 + 2 k2 + 2 k3 + k4)/6 and likewise v.",
                NULL, 0, ms_rk4, MS_IMPULSE_FRICTION, 2.8284271247461903 /* 2 sqrt 2 */},
    [MS_VELOCITY_VERLET] = {"velocity_verlet",
                            "Kick-drift-kick: v += (h/2) a(x); x += h v; v += (h/2) a(x). "
                            "Second-order symplectic, stable below h ~ 2/omega_max.",
                            NULL, 0, ms_velocity_verlet, MS_SELF_PREPARED | MS_IMPULSE_FRICTION,
                            2.0},
    [MS_IMPLICIT_MIDPOINT] = {"implicit_midpoint",
                              "x1 = x0 + h (v0 + v1)/2, v1 = v0 + h a((x0 + x1)/2): g minimised "
                              "for the midpoint z with h' = h/2, y = x0 + (h/2) v0 + (h/2)^2 "
                              "a_ext; x1 = 2z - x0. Energy-conserving on a linear spring; "
                              "without numerical damping, stiff contact or springs at omega h "
                              ">> 1 can gain energy.",
                              PARAMS(implicit_params), ms_implicit_midpoint, 0, INFINITY},
    [MS_BDF2] = {"bdf2",
                 "x1 - 4/3 x0 + 1/3 x_-1 = 2/3 h v1 and likewise v: g minimised with h' = 2h/3 "
                 "and y from the two previous states; implicit Euler when there is no previous "
                 "state of the same dt (first step, after a state assignment).",
                 PARAMS(implicit_params), ms_bdf2, 0, INFINITY},
};
#undef PARAMS
#undef FMS_PARAMS
#undef FMS_ACCEL_DOC
#undef FMS_RHO_DOC

/* 1 when v is finite and lies in field f's range */
int ms_opt_in_range(const ms_opt_field *f, double v) {
  return isfinite(v) && v >= f->lo && (f->hi_open ? v < f->hi : v <= f->hi);
}

/* the value of field f in o */
double ms_opt_get(const ms_opt *o, const ms_opt_field *f) {
  const char *p = (const char *)o + f->offset;
  return f->type == MS_REAL ? *(const double *)p : *(const int *)p;
}

/* store v into field f of o (an integer field takes v as it is: the caller checked it) */
void ms_opt_set(ms_opt *o, const ms_opt_field *f, double v) {
  char *p = (char *)o + f->offset;
  if (f->type == MS_REAL)
    *(double *)p = v;
  else
    *(int *)p = (int)v;
}

/* o with every option of method at its default (other fields zero) */
void ms_opt_defaults(ms_method method, ms_opt *o) {
  *o = (ms_opt){0};
  const ms_method_def *md = &ms_methods[method];
  for (int i = 0; i < md->nparam; i++)
    ms_opt_set(o, &ms_opt_fields[md->params[i].field], md->params[i].value);
}

/* the index of field among method's options, or -1 when it takes none */
static int ms_opt_index(ms_method method, ms_opt_id field) {
  const ms_method_def *md = &ms_methods[method];
  for (int i = 0; i < md->nparam; i++)
    if (md->params[i].field == field) return i;
  return -1;
}

#define BIT(id) (1u << (id))

/* the first option of method whose value in o is out of range, or -1; then the acceleration
 * must be one the chosen solver of g offers (its row's accel) */
int ms_opt_check(ms_method method, const ms_opt *o) {
  const ms_method_def *md = &ms_methods[method];
  for (int i = 0; i < md->nparam; i++) {
    const ms_opt_field *f = &ms_opt_fields[md->params[i].field];
    double v = ms_opt_get(o, f);
    if (v == MS_BY_SOLVER && md->params[i].value == MS_BY_SOLVER) continue;
    if (!ms_opt_in_range(f, v)) return i;
  }
  if (ms_opt_index(method, MS_OPT_MINIMIZER) < 0) return -1;
  const ms_solver_def *sd = &ms_solvers[o->minimizer];
  if (sd->reads & BIT(MS_OPT_ACCELERATION) && !(sd->accel & BIT(o->acceleration)))
    return ms_opt_index(method, MS_OPT_ACCELERATION);
  return -1;
}

/* options every solver of g reads, and each solver's own */
#define ANY_SOLVER \
  (BIT(MS_OPT_MINIMIZER) | BIT(MS_OPT_ITERATIONS) | BIT(MS_OPT_TOL) | BIT(MS_OPT_START))
#define FMS_MATRIX (BIT(MS_OPT_PIN) | BIT(MS_OPT_PIN_WEIGHT))

/* the solvers of g: name, minimiser, default iteration cap (1 for Newton: the course
 * convention), the options it reads, the accelerations it offers (VBD's Chebyshev
 * extrapolation has no Anderson twin) */
const ms_solver_def ms_solvers[MS_NMIN] = {
    [MS_MIN_NEWTON] = {"newton", ms_newton_minimize, 1,
                       ANY_SOLVER | BIT(MS_OPT_SPD) | BIT(MS_OPT_SHIFT) | BIT(MS_OPT_LINE_SEARCH)},
    [MS_MIN_FMS] = {"fms", ms_fms_minimize, 10,
                    ANY_SOLVER | FMS_MATRIX | BIT(MS_OPT_ACCELERATION) | BIT(MS_OPT_RHO) |
                        BIT(MS_OPT_CHEBYSHEV_DELAY) | BIT(MS_OPT_RELAX) | BIT(MS_OPT_WINDOW),
                    BIT(MS_ACCEL_NONE) | BIT(MS_ACCEL_CHEBYSHEV) | BIT(MS_ACCEL_ANDERSON)},
    [MS_MIN_LBFGS] = {"lbfgs", ms_lbfgs_minimize, 10, ANY_SOLVER | FMS_MATRIX | BIT(MS_OPT_WINDOW)},
    [MS_MIN_VBD] = {"vbd", ms_vbd_minimize, 10,
                    ANY_SOLVER | BIT(MS_OPT_ACCELERATION) | BIT(MS_OPT_RHO),
                    BIT(MS_ACCEL_NONE) | BIT(MS_ACCEL_CHEBYSHEV)},
};

/* the workspaces a System's data may hold, each freed by its owner's function */
const ms_workspace_def ms_workspaces[] = {
    {offsetof(ms_data, implicit), ms_implicit_free}, {offsetof(ms_data, fms), ms_fms_free},
    {offsetof(ms_data, xpbd), ms_xpbd_free},         {offsetof(ms_data, lbfgs), ms_lbfgs_free},
    {offsetof(ms_data, vbd), ms_vbd_free},           {offsetof(ms_data, sc), ms_self_free},
};
const int ms_nworkspace = sizeof(ms_workspaces) / sizeof(ms_workspaces[0]);

/* the first option of method given in `given` (bits of ms_opt_id) that its chosen solver of g
 * does not read, as an index into the method's params, or -1 */
int ms_opt_refused(ms_method method, const ms_opt *o, uint32_t given) {
  if (ms_opt_index(method, MS_OPT_MINIMIZER) < 0) return -1;
  uint32_t unread = given & ~ms_solvers[o->minimizer].reads;
  const ms_method_def *md = &ms_methods[method];
  for (int i = 0; i < md->nparam; i++)
    if (unread & BIT(md->params[i].field)) return i;
  return -1;
}

/* the iteration cap of a step with options o: o->iterations, or the solver's own */
int ms_opt_iterations(const ms_opt *o) {
  return o->iterations == MS_BY_SOLVER ? ms_solvers[o->minimizer].cap : o->iterations;
}
