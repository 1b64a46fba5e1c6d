/* msim core: mass-spring model, state and integrators. No Python in here.
 *
 * The model (ms_model) holds what is constant between parameter changes: topology, masses,
 * stiffness, rest lengths, the fixed set, gravity and damping. The data (ms_data) holds what
 * changes every step: positions, velocities, external forces, scratch and per-method workspaces.
 * Every call returns an ms_status; the core never aborts and never prints.
 */
#ifndef MSIM_H
#define MSIM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* vectorised clones of a hot loop for AVX2 machines, picked at load time (-std=c11 contracts
 * no multiply-add, so every clone computes the same bits) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(MSIM_NO_CLONES)
#define MS_CLONES __attribute__((target_clones("default", "arch=x86-64-v3")))
#else
#define MS_CLONES
#endif

/* status codes returned by core calls */
typedef enum {
  MS_OK = 0,
  MS_ENOMEM,     /* an allocation failed */
  MS_EINPUT,     /* an argument out of range (the binding checks first) */
  MS_EDIVERGED,  /* a position or velocity became non-finite or exceeded MS_BOUND */
  MS_ENOTPD,     /* a matrix was not positive definite */
  MS_ECHOLMOD,   /* CHOLMOD failed for another reason */
  MS_EINTERRUPT, /* the caller's interrupt callback asked the step to stop */
} ms_status;

/* positions [m] and velocities [m/s] beyond this magnitude count as diverged */
#define MS_BOUND 1e10

/* integrators */
typedef enum {
  MS_EXPLICIT_EULER = 0,
  MS_SYMPLECTIC_EULER,
  MS_IMPLICIT_EULER,
  MS_LINEARIZED_IMPLICIT,
  MS_FMS,
  MS_XPBD,
  MS_RK4,
  MS_VELOCITY_VERLET,
  MS_IMPLICIT_MIDPOINT,
  MS_BDF2,
  MS_NMETHOD,
} ms_method;

/* constant model: changes only when the user sets a parameter */
typedef struct {
  int nv;               /* vertices */
  int ns;               /* springs */
  int *edge;            /* (ns,2) vertex indices */
  int *adj_start;       /* (nv+1) vertex v's springs are adj[2 adj_start[v] .. 2 adj_start[v+1]) */
  int *adj;             /* (2ns,2) per vertex: (other end, spring), in spring order */
  double *rest;         /* (ns) rest lengths [m] */
  double *k;            /* (ns) stiffness [N/m] */
  double *mass;         /* (nv) vertex masses [kg] */
  double *imass;        /* (nv) inverse masses, 0 for fixed vertices [1/kg] */
  unsigned char *fixed; /* (nv) 1 where the vertex is kinematic */
  int *dof;             /* (nv) index among free vertices, -1 where fixed */
  int nfree;            /* free vertices */
  double gravity[3];    /* [m/s^2] */
  double damping;       /* ether drag rate [1/s]: v *= exp(-damping*h) each step */
  int nplane;           /* contact planes */
  double *plane;        /* (nplane,4) unit normal and offset: outside where n.x >= offset */
  int nsphere;          /* contact spheres */
  double *sphere;       /* (nsphere,4) centre [m] and radius [m] */
  double kc;            /* contact penalty stiffness [N/m] */
  double cscale;        /* sphere contact radius factor s: contact at s * radius */
  double mu;            /* Coulomb friction coefficient */
  int nthread;          /* threads of the passes inside a step (results do not depend on it) */
  uint64_t rev;         /* bumped when mass, stiffness or the fixed set change */
  uint64_t rev_fixed;   /* bumped when the fixed set changes (sparsity patterns) */
} ms_model;

/* options of one step; each integrator reads the fields it documents */
typedef struct {
  int iterations; /* iteration cap of iterative methods; MS_BY_SOLVER: the solver's own */
  double tol;     /* stop when the residual falls below this (0: never) */
  int history;    /* 1: record the iteration history (ms_hist); 0: nobody reads it, so methods
                     skip the passes that only serve it and info->nhist comes back 0. Not in
                     the options table: the binding's history keyword sets it */
  /* implicit_euler, linearized_implicit */
  int spd;         /* ms_spd: how the spring Hessian is kept positive definite */
  double shift;    /* MS_SPD_SHIFT: eps added to the stiffness diagonal [N/m] */
  int line_search; /* implicit_euler: backtracking Armijo line search on g */
  int solver;      /* linearized_implicit: ms_linsolver */
  int minimizer;   /* implicit_euler, implicit_midpoint, bdf2: ms_minimizer, the solver of g */
  /* fms, xpbd */
  int pin;             /* fms: 0 eliminate fixed vertices, 1 penalise them (ms_fms_pin) */
  double pin_weight;   /* fms penalty stiffness on fixed vertices [N/m] */
  int acceleration;    /* fms: ms_fms_accel */
  double rho;          /* fms chebyshev: spectral radius estimate in [0, 1) */
  int chebyshev_delay; /* fms chebyshev: plain iterations before it starts */
  double relax;        /* fms chebyshev: under-relaxation gamma */
  int window;          /* fms anderson: history length m */
  int start;           /* fms, implicit_euler: ms_start, the iterations' initial guess */
  int substeps;        /* xpbd: substeps per step */
  double xpbd_damping; /* xpbd: constraint damping beta [N s/m] */
  int sweep;           /* xpbd: ms_xpbd_sweep, the order of the projections */
} ms_opt;

/* keeping spring Hessians positive definite */
typedef enum {
  MS_SPD_CLAMP = 0, /* lateral factor (1 - L/l) clamped at 0 */
  MS_SPD_SHIFT,     /* exact Hessian plus shift * I */
  MS_SPD_PROJECT,   /* per-spring eigenvalue projection (equals the clamp for springs) */
  MS_SPD_NONE,      /* exact Hessian; an indefinite matrix is an error */
  MS_NSPD,
} ms_spd;

/* linear solvers of linearized_implicit */
typedef enum {
  MS_SOLVE_CG = 0, /* conjugate gradients, block-Jacobi preconditioned */
  MS_SOLVE_JACOBI, /* block-Jacobi iteration */
  MS_SOLVE_DIRECT, /* CHOLMOD */
  MS_NSOLVE,
} ms_linsolver;

/* minimisers of g, the solvers of implicit_euler, implicit_midpoint and bdf2 (ms_opt.minimizer) */
typedef enum { MS_MIN_NEWTON = 0, MS_MIN_FMS, MS_MIN_LBFGS, MS_MIN_VBD, MS_NMIN } ms_minimizer;

/* an iteration cap left to the solver: ms_opt_iterations gives the solver's own */
#define MS_BY_SOLVER (-1)

/* fms pinning and acceleration choices (ms_opt.pin, ms_opt.acceleration) */
typedef enum { MS_PIN_ELIMINATE = 0, MS_PIN_PENALTY, MS_NPIN } ms_fms_pin;
typedef enum { MS_ACCEL_NONE = 0, MS_ACCEL_CHEBYSHEV, MS_ACCEL_ANDERSON, MS_NACCEL } ms_fms_accel;

/* the order of xpbd's projections (ms_opt.sweep): the springs' own, or colour by colour */
typedef enum { MS_SWEEP_SEQUENTIAL = 0, MS_SWEEP_COLOURED, MS_NSWEEP } ms_xpbd_sweep;

/* where the iterations of the implicit methods start (ms_opt.start) */
typedef enum {
  MS_START_LOWEST = 0,   /* whichever of settled, extrapolated and previous has the lowest g */
  MS_START_INERTIAL,     /* y = x_t + h v + h^2 (g + f_ext / m) */
  MS_START_SETTLED,      /* y with each vertex in contact settled against its collider */
  MS_START_PREVIOUS,     /* x_t */
  MS_START_EXTRAPOLATED, /* x_t + h v (Liu's published code) */
  MS_NSTART,
} ms_start;

/* options.c: the one table of step options. ms_opt_fields describes each ms_opt field;
 * ms_methods lists, per method, the options it takes under their public names, with defaults
 * and documentation. Choice names are indexed by their enum values. */
typedef enum { MS_INT = 0, MS_REAL, MS_FLAG, MS_CHOICE } ms_opt_type;
typedef enum {
  MS_OPT_ITERATIONS = 0,
  MS_OPT_TOL,
  MS_OPT_SPD,
  MS_OPT_SHIFT,
  MS_OPT_LINE_SEARCH,
  MS_OPT_SOLVER,
  MS_OPT_MINIMIZER,
  MS_OPT_PIN,
  MS_OPT_PIN_WEIGHT,
  MS_OPT_ACCELERATION,
  MS_OPT_RHO,
  MS_OPT_CHEBYSHEV_DELAY,
  MS_OPT_RELAX,
  MS_OPT_WINDOW,
  MS_OPT_START,
  MS_OPT_SUBSTEPS,
  MS_OPT_XPBD_DAMPING,
  MS_OPT_SWEEP,
  MS_NOPT,
} ms_opt_id;
typedef struct {
  const char *name;           /* the field's name, the binding's core keyword */
  size_t offset;              /* of the field in ms_opt: double for MS_REAL, else int */
  ms_opt_type type;           /* MS_INT, MS_REAL, MS_FLAG (0 or 1), MS_CHOICE (enum index) */
  double lo, hi;              /* allowed values: finite, in [lo, hi], or [lo, hi) when hi_open */
  int hi_open;                /* 1: hi itself is excluded */
  const char *const *choices; /* MS_CHOICE: names in enum order, NULL-terminated */
} ms_opt_field;
typedef struct {
  const char *name; /* public name, as users pass it */
  ms_opt_id field;  /* the ms_opt field it sets */
  double value;     /* default: a number, a flag's 0 or 1, or a choice's enum index */
  const char *doc;  /* what it does, with units */
} ms_param;
typedef struct {
  const char *name;       /* public name of the method */
  const char *summary;    /* what it does, one sentence */
  const ms_param *params; /* its options */
  int nparam;
} ms_method_def;
extern const ms_opt_field ms_opt_fields[MS_NOPT];
extern const ms_method_def ms_methods[MS_NMETHOD];
int ms_opt_in_range(const ms_opt_field *f, double v);
double ms_opt_get(const ms_opt *o, const ms_opt_field *f);
void ms_opt_set(ms_opt *o, const ms_opt_field *f, double v);
void ms_opt_defaults(ms_method method, ms_opt *o);
int ms_opt_check(ms_method method, const ms_opt *o);
int ms_opt_iterations(const ms_opt *o);

/* options.c: a System's constructor defaults, one place for the binding, msim.System's
 * documentation (msim._core.defaults()) and ms_model_defaults */
typedef enum {
  MS_DEFAULT_MASS = 0,
  MS_DEFAULT_STIFFNESS,
  MS_DEFAULT_GRAVITY,
  MS_DEFAULT_DAMPING,
  MS_DEFAULT_CONTACT_STIFFNESS,
  MS_DEFAULT_CONTACT_SCALE,
  MS_DEFAULT_FRICTION,
  MS_DEFAULT_THREADS,
  MS_NDEFAULT,
} ms_default_id;
typedef struct {
  const char *name; /* constructor keyword */
  double value[3];  /* its value: a scalar, or a 3-vector when size is 3 */
  int size;
} ms_default;
extern const ms_default ms_defaults[MS_NDEFAULT];
void ms_model_defaults(ms_model *m);

/* per-method workspaces, defined in their .c files */
typedef struct ms_fms_ws ms_fms_ws;
typedef struct ms_xpbd_ws ms_xpbd_ws;
typedef struct ms_lbfgs_ws ms_lbfgs_ws;
typedef struct ms_vbd_ws ms_vbd_ws;

/* what one step did */
typedef struct {
  int iters;       /* iterations run (1 for single-pass methods) */
  int converged;   /* 1 when tol was met or the method is not iterative */
  int nhist;       /* entries written to data->hres and data->hobj */
  int option;      /* MS_EINPUT: the out-of-range option's index in its method's params */
  int vertex;      /* MS_EDIVERGED, MS_ENOTPD: the vertex where it happened, else -1 */
  int axis;        /* MS_ENOTPD: the axis (0..2) of the failing row of a matrix of 3x3
                      blocks; -1 in a scalar (per-vertex) matrix or when no row is known */
  int checked;     /* the method's last vertex pass put the fixed vertices back and checked
                      the state (ms_check_vertices), so the step makes no pass of its own */
  double assemble; /* seconds in assembly (implicit methods) */
  double factor;   /* seconds in factorisation */
  double solve;    /* seconds in solves */
} ms_info;

/* the friction of an implicit step, lagged from its start x_t (friction.c): vertex i in
 * contact there carries the normal force lambda_i along n_i, and friction adds the potential
 * D_i = w_i F(|P_i (x_i - a_i)|) to g, w_i = mu lambda_i, P_i = I - n_i n_i^T, a_i the
 * scheme's base point */
typedef struct {
  double *w;            /* (nv) mu lambda_i [N], 0 where vertex i carries no contact */
  double *n;            /* (nv,3) unit normal of the contact force at x_t */
  const double *anchor; /* (nv,3) where the slip is measured from [m] */
  double h;             /* the step the slip accumulates over (the scheme's h') [s] */
  int active;           /* some w_i > 0: D is part of g this step */
} ms_friction;

/* per-method workspaces kept in ms_data, defined in their own files */
typedef struct ms_implicit ms_implicit;

/* a caller's interrupt check, polled from long loops: nonzero stops the step */
typedef int (*ms_interrupt_fn)(void *ctx);

/* polls of the interrupt check at most this often [s] */
#define MS_POLL_INTERVAL 0.05

/* iteration histories keep at most this many entries per step (the rest run unrecorded) */
#define MS_HIST_MAX (1 << 20)

/* changing data: state, scratch and method workspaces */
typedef struct {
  double *x;                 /* (nv,3) positions [m] */
  double *v;                 /* (nv,3) velocities [m/s] */
  double *xn;                /* (nv,3) next positions, swapped in when a step succeeds */
  double *vn;                /* (nv,3) next velocities */
  double *f;                 /* (nv,3) force scratch [N] */
  double *y;                 /* (nv,3) inertial target of implicit methods [m] */
  double *g;                 /* (nv,3) gradient scratch [N] */
  double *s;                 /* (nv,3) scratch: rk4 stage velocities, bdf2 base point */
  double *vb;                /* (nv,3) bdf2 base velocity [m/s] */
  ms_friction fr;            /* this step's lagged friction (ms_step resets it) */
  double *xp;                /* (nv,3) positions one step back (bdf2 history) [m] */
  double *vp;                /* (nv,3) velocities one step back [m/s] */
  double hp;                 /* the step that led from xp, vp to x, v [s]; 0: no history */
  double *fext;              /* (nv,3) external forces [N]; fixed vertices ignore them */
  double *fc, *rc, *es;      /* (ns) per-spring coefficients and energies of the spring passes */
  double *eblk;              /* (ms_spring_blocks) spring energy per block [J] */
  double time;               /* simulated time [s] */
  int64_t nstep;             /* steps taken */
  int hcap;                  /* capacity of the history arrays */
  double *hres;              /* (hcap) residual per iteration */
  double *hobj;              /* (hcap) objective per iteration */
  ms_implicit *implicit;     /* implicit.c workspace, NULL until first used */
  ms_fms_ws *fms;            /* fms workspace (factor, acceleration history), made on first use */
  ms_xpbd_ws *xpbd;          /* xpbd workspace (multipliers), built on first use */
  ms_lbfgs_ws *lbfgs;        /* lbfgs workspace (curvature pairs), made on first use */
  ms_vbd_ws *vbd;            /* vbd workspace (colouring, chebyshev iterates), made on first use */
  ms_interrupt_fn interrupt; /* polled by long loops; NULL: never interrupted */
  void *interrupt_ctx;       /* its argument */
  double polled;             /* ms_clock() at the last poll [s] */
} ms_data;

/* memory.c: every array the core keeps comes from ms_alloc: n elements of size bytes, zeroed,
 * at least one element (a valid pointer for n = 0); NULL when out of memory. Workspaces are
 * allocated all or nothing: a *_new function returns a complete one or NULL, and only then is
 * it published in ms_data, so a failed allocation leaves nothing half-built for the next step.
 * ms_fail_alloc(k) makes the k-th ms_alloc from now fail (0: none), a test hook. */
void *ms_alloc(size_t n, size_t size);
void ms_fail_alloc(int k);

/* model.c: allocation and derived quantities */
ms_status ms_model_alloc(ms_model *m, int nv, int ns);
void ms_model_free(ms_model *m);
void ms_model_update(ms_model *m, int fixed_changed);
void ms_model_topology(ms_model *m);

/* data.c: allocation and history */
ms_status ms_data_alloc(ms_data *d, const ms_model *m);
void ms_data_free(ms_data *d);
ms_status ms_data_reserve(ms_data *d, int hcap);
void ms_hist(ms_data *d, int k, double res, double obj);
int ms_hist_count(const ms_data *d, int entries);

/* threads.c: the thread count of parallel passes (1 in a forked child that lost OpenMP's pool) */
void ms_threads_init(void);
uint64_t ms_fork_generation(void);
int ms_threads(const ms_model *m);
typedef void (*ms_block_fn)(void *ctx, int lo, int hi);
void ms_blocks(const ms_model *m, int n, int size, ms_block_fn fn, void *ctx);

/* spring.c: energies and forces. The passes over springs and vertices run over fixed blocks
 * whose results are combined in block order, so m->nthread changes their speed, never their
 * result. Spring s pulls its end i by c_s (x_i - x_j) with c_s = k (r/l - 1). */
#define MS_SBLOCK 2048 /* springs per block */
#define MS_VBLOCK 256  /* vertices per block */
/* a spring shorter than this counts as this long [m]: its x_i - x_j is ~0, so it pushes
 * nothing, and its force coefficient stays finite */
#define MS_TINY 1e-150
int ms_spring_blocks(int ns);
double ms_spring_energy(const ms_model *m, const double *x);
double ms_spring_coefs(const ms_model *m, const double *x, double *fc, double *rc, double rscale,
                       double *es, double *eblk);
void ms_spring_gather(const ms_model *m, const double *x, const double *c, double *out,
                      const double *c2, double *out2);
void ms_spring_gather_range(const ms_model *m, const double *x, const double *c, double *out,
                            int v0, int v1);
double ms_spring_forces(const ms_model *m, ms_data *d, const double *x, double *f, int energy);
void ms_total_forces(const ms_model *m, ms_data *d, const double *x, double *f);

/* energies of a state [J] */
typedef struct {
  double kinetic, spring, gravity, collision;
} ms_energies;
ms_energies ms_energy(const ms_model *m, const ms_data *d);
void ms_spring_hessian(const ms_model *m, const double *x, int s, ms_spd spd, double blk[9]);

/* 3x3 Hessian block, row-major [N/m], of a spring of stiffness k and rest length r whose ends
 * differ by d, of length len: k uu^T + k (1 - r/len)(I - uu^T), u = d/len. Its eigenvalues are
 * k (along u) and k (1 - r/len) twice (across), so projecting them onto [0, inf)
 * (MS_SPD_PROJECT) is the same as clamping (1 - r/len) at 0 (MS_SPD_CLAMP); the other variants
 * return the exact block. A spring of zero length has no direction: k I. */
static inline void ms_spring_block(const double d[3], double len, double k, double r, ms_spd spd,
                                   double blk[9]) {
  double across = len > 0 ? 1.0 - r / len : 1.0, u[3];
  if ((spd == MS_SPD_CLAMP || spd == MS_SPD_PROJECT) && across < 0) across = 0;
  for (int t = 0; t < 3; t++) u[t] = len > 0 ? d[t] / len : 0.0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      blk[3 * i + j] = k * ((1.0 - across) * u[i] * u[j] + (i == j ? across : 0.0));
}

/* contact.c: planes and spheres (penalty energy and its derivatives, projection) */
double ms_contact_point(const ms_model *m, const double *p, double *f);
double ms_contact_forces(const ms_model *m, const double *x, double *f);
double ms_contact_normal(const ms_model *m, const double *p, double n[3]);
int ms_contact_hessian(const ms_model *m, const double *x, int i, double *blk);
int ms_contact_path(const ms_model *m, const double *a, const double *p);
void ms_contact_nearest(const ms_model *m, const double *p, double out[3]);
void ms_contact_project(const ms_model *m, const double *ref, double *x, double *depth,
                        double *normal);

/* friction.c: Coulomb friction in the form each family of methods takes: a lagged potential
 * in g (the implicit schemes and their solvers), a velocity impulse after the step (the
 * explicit methods and linearised implicit Euler), positional static and velocity dynamic
 * friction (xpbd) */
void ms_friction_begin(const ms_model *m, ms_data *d, const double *anchor, double h);
double ms_friction_stiffness(const ms_model *m, const ms_data *d, int i);
double ms_friction_forces(const ms_model *m, const ms_data *d, const double *x, double *f);
double ms_friction_vertex(const ms_model *m, const ms_data *d, const double *p, int i, double *f,
                          double *blk);
void ms_friction_impulse(const ms_model *m, ms_data *d, double h);
void ms_friction_stick(const ms_model *m, const double *ref, double *x, const double *depth,
                       const double *normal, unsigned char *stuck);
void ms_friction_slide(const ms_model *m, double *v, const double *depth, const double *normal,
                       const unsigned char *stuck, double h);

/* g + f_ext / m from the values: gravity g, inverse mass im and external force fext, for a
 * loop that holds them in locals [m/s^2] */
static inline double ms_accel_of(double g, double im, double fext) {
  return g + im * fext;
}

/* acceleration of vertex i along axis t from gravity and its external force [m/s^2]; the
 * external force moves free vertices only (imass is 0 on fixed ones) */
static inline double ms_accel(const ms_model *m, const ms_data *d, int i, int t) {
  return ms_accel_of(m->gravity[t], m->imass[i], d->fext[3 * i + t]);
}

/* potential.c: an implicit scheme's step as the minimisation of g with step hs and target y:
 * implicit Euler (hs = h), implicit midpoint (the midpoint z, hs = h/2) and BDF2 (hs = 2h/3,
 * built from two states; implicit Euler without a history of step h). ms_scheme_begin writes
 * y into d->y and the start point into d->xn; once d->xn holds g's minimiser,
 * ms_scheme_end turns it into the step's positions and velocities (xn, vn). */
typedef struct {
  ms_method method; /* MS_IMPLICIT_EULER, MS_IMPLICIT_MIDPOINT or MS_BDF2 */
  double h;         /* the step [s] */
  double hs;        /* g's effective step h' [s] */
  const double *xb; /* base point: y = xb + hs vb + hs^2 a [m] */
} ms_scheme;
ms_scheme ms_scheme_begin(const ms_model *m, ms_data *d, ms_method method, double h, int start);
void ms_scheme_end(const ms_model *m, ms_data *d, const ms_scheme *sc);

/* potential.c: the incremental potential g(x) = |x - y|_M^2 / (2 h^2) + E(x) + D(x), E the
 * spring and contact energy, D the step's lagged friction (d->fr) */
void ms_inertial_target(const ms_model *m, const ms_data *d, double h, double *y);
double ms_objective(const ms_model *m, const ms_data *d, const double *x, const double *y,
                    double h);
double ms_objective_grad(const ms_model *m, ms_data *d, const double *x, const double *y, double h,
                         double *grad, double *obj);
double ms_objective_finish(const ms_model *m, const ms_data *d, const double *x, const double *y,
                           double h, double *grad, double spring, double *obj);

/* step.c's start of every step for vertex i: xn = x and vn = decay v (decay = exp(-damping
 * h)), a fixed vertex at rest; methods whose first pass does it themselves skip ms_step's */
static inline void ms_prepare_vertex(const ms_model *m, ms_data *d, double decay, int i) {
  for (int t = 0; t < 3; t++) {
    d->xn[3 * i + t] = d->x[3 * i + t];
    d->vn[3 * i + t] = m->fixed[i] ? 0.0 : decay * d->v[3 * i + t];
  }
}

/* a.b over n entries */
static inline double ms_dot(int n, const double *a, const double *b) {
  double s = 0;
  for (int k = 0; k < n; k++) s += a[k] * b[k];
  return s;
}

/* dense.c: small dense solves */
int ms_spd3_step(const double H[9], const double grad[3], double dx[3]);
int ms_spd_solve(double *a, double *b, int c);

/* explicit.c: explicit and symplectic Euler, classical Runge-Kutta, velocity Verlet */
ms_status ms_explicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info);
ms_status ms_symplectic_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                              ms_info *info);
ms_status ms_rk4(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info);
ms_status ms_velocity_verlet(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                             ms_info *info);

/* solvers of g: on entry d->y holds y and d->xn the start point (fixed vertices at x_t in both);
 * d->x, d->vn, d->s and d->vb (the step's start state and BDF2's base) stay untouched. At most
 * cap iterations, stopping once |grad g| < o->tol when o->tol > 0; d->xn ends at the last
 * iterate. History entry k: |grad g| [N] and g [J] at iterate k (entry 0: the start point).
 * Fills info->iters, nhist, converged and its timings; results do not depend on m->nthread */
/* the line searches of the solvers of g: Armijo sufficient-decrease constant, the smallest
 * step tried, and the relative rounding allowance on g near a minimum (Hager and Zhang's
 * approximate Armijo condition) */
#define MS_ARMIJO 1e-4
#define MS_MIN_STEP 0x1p-30
#define MS_ROUNDING 1e-12

typedef ms_status (*ms_minimize_fn)(const ms_model *m, ms_data *d, double hs, int cap,
                                    const ms_opt *o, ms_info *info);
ms_status ms_newton_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                             ms_info *info);
ms_status ms_fms_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                          ms_info *info);
ms_status ms_lbfgs_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                            ms_info *info);

/* implicit.c: implicit Euler, implicit midpoint and BDF2 by any solver of g; linearised
 * implicit Euler */
ms_status ms_implicit_euler(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                            ms_info *info);
ms_status ms_implicit_midpoint(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                               ms_info *info);
ms_status ms_bdf2(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info);
ms_status ms_linearized_implicit(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                                 ms_info *info);
void ms_implicit_free(ms_implicit *w);
/* fms.c: fast mass-spring (Liu 2013) with Chebyshev or Anderson acceleration, as the fms method
 * and as a solver of g; ms_fms_prepare makes the prefactored matrix A = M + hs^2 L (+ contact
 * and pin penalties) current for this step, ms_fms_apply_inverse z = A^-1 r ((nv,3), zero on
 * fixed vertices; r and z may alias) */
typedef enum { MS_FMS_SETUP = 0, MS_FMS_LOCAL, MS_FMS_SOLVE } ms_fms_part;
ms_status ms_fms(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info);
ms_status ms_fms_prepare(const ms_model *m, ms_data *d, double hs, const ms_opt *o, ms_info *info);
ms_status ms_fms_apply_inverse(const ms_model *m, ms_data *d, const double *r, double *z);
void ms_fms_free(ms_fms_ws *w);
int64_t ms_fms_factorizations(const ms_data *d);
ms_status ms_fms_kernel(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_fms_part part,
                        int reps);

/* xpbd.c: extended position-based dynamics (Macklin 2016) on spring constraints */
ms_status ms_xpbd(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_info *info);
void ms_xpbd_free(ms_xpbd_ws *w);

/* vertex.c: one vertex's share G_i of g (its neighbours held) and a safeguarded Newton step on
 * it */
typedef struct {
  const ms_model *m;
  const ms_data *d; /* the step's friction (d->fr) */
  double *x;        /* (nv,3) the iterate, updated in place */
  const double *y;  /* (nv,3) the target */
  double hs2;       /* 1/hs^2 [1/s^2] */
} ms_vertex;
double ms_vertex_step(const ms_vertex *c, int i);

/* lbfgs.c: L-BFGS on g with FMS's matrix as initial Hessian (Liu, Bouaziz and Kavan 2017) */
void ms_lbfgs_free(ms_lbfgs_ws *w);
/* vbd.c: vertex block descent (Chen et al. 2024) on g, Gauss-Seidel over a vertex colouring */
ms_status ms_vbd_minimize(const ms_model *m, ms_data *d, double hs, int cap, const ms_opt *o,
                          ms_info *info);
void ms_vbd_free(ms_vbd_ws *w);

/* step.c: one step of any method; on failure the state is left as it was */
double ms_clock(void);
int ms_interrupted(ms_data *d);
void ms_check_vertices(const ms_data *d, int lo, int hi, _Atomic int *bad);
ms_status ms_step(const ms_model *m, ms_data *d, ms_method method, double h, const ms_opt *o,
                  ms_info *info);

/* chol.c: sparse Cholesky of spring matrices over free vertices (fixed ones eliminated);
 * analyse once per fixed set, then zero / add blocks / factor / solve as often as needed */
typedef struct ms_chol ms_chol;
void ms_chol_init(void);
int ms_chol_serialised(void);
void ms_cholmod_version(int version[3]);
ms_status ms_chol_springs(ms_chol **out, const ms_model *m, int b, int many_solves);
void ms_chol_free(ms_chol *ch);
int ms_chol_current(const ms_chol *ch, const ms_model *m);
int ms_chol_size(const ms_chol *ch);
void ms_chol_zero(ms_chol *ch);
void ms_chol_add_vertex(ms_chol *ch, const ms_model *m, int v, const double *blk);
void ms_chol_add_spring(ms_chol *ch, const ms_model *m, int s, const double *blk);
ms_status ms_chol_factor(ms_chol *ch, int *vertex, int *axis);
ms_status ms_chol_solve(ms_chol *ch, double *rhs, int nrhs, int nthread);

#endif
