/* msim.h: the engine's public header, what the Python binding (csrc/binding) uses: the model,
 * the data, the step and its options, the registry of methods and solvers, the table of model
 * parameters. The engine's own files include engine.h, which adds the internal header of
 * each capability (springs, contact, the potential g, its solvers, the methods, CHOLMOD,
 * threads). No Python in here.
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

/* the lesser and the greater of a and b, as fmin and fmax (a NaN argument yields the other) but
 * inline: the libm calls cost a fifth of a box pass */
static inline double ms_min(double a, double b) {
  double m = b < a ? b : a; /* (two selects, no branch: the comparisons are unpredictable) */
  return a != a ? b : m;
}
static inline double ms_max(double a, double b) {
  double m = b > a ? b : a;
  return a != a ? b : m;
}

/* status codes returned by core calls */
typedef enum {
  MS_OK = 0,
  MS_ENOMEM,     /* an allocation failed */
  MS_EINPUT,     /* an argument out of range (the binding checks first) */
  MS_EDIVERGED,  /* a position or velocity became non-finite or exceeded MS_BOUND */
  MS_ENOTPD,     /* a matrix was not positive definite */
  MS_ECHOLMOD,   /* CHOLMOD failed for another reason */
  MS_EINTERRUPT, /* the caller's interrupt callback asked the step to stop */
  MS_ECROSSING,  /* self-contact: the starting state already crosses itself */
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
  int nf;               /* collision triangles (self-contact) */
  int *face;            /* (nf,3) their vertex indices */
  int ne;               /* the triangles' edges */
  int *fedge;           /* (ne,2) their vertex indices, each edge once, in ascending order */
  int *fside;           /* (nf,3) the fedge index of each triangle's edge from corner k to k + 1 */
  int *vf_start;        /* (nv+1) the triangles holding vertex v are vf[vf_start[v] ..) */
  int *vf;              /* (3nf) ascending for each vertex */
  int *ve_start;        /* (nv+1) the fedges holding vertex v are ve[ve_start[v] ..) */
  int *ve;              /* (2ne) ascending for each vertex */
  int *ring_start;      /* (nv+1) vertex v's ring is ring[ring_start[v] .. ring_start[v+1]) */
  int *ring;            /* sorted vertices within sc_ring triangle edges of each vertex */
  int disk;             /* 1: the triangles form one topological disk holding every vertex */
  int *ftwin;           /* (nf,3) disk only: the triangle across each triangle's edge from its
                           corner k to corner k + 1, -1 on the boundary */
  int *fbound;          /* (nfbound) disk only: the triangles with an edge on the boundary */
  int nfbound;          /* how many, ascending */
  int self_contact;     /* 1: triangles keep sc_thickness apart and never cross */
  double sc_thickness;  /* the distance self-contact keeps [m] */
  double sc_stiffness;  /* self-contact energy's stiffness [N/m] */
  int sc_ring;          /* pairs closer than this many triangle edges never repel */
  double sc_mu;         /* Coulomb friction coefficient between touching triangles */
  int nthread;          /* threads of the passes inside a step (results do not depend on it) */
  uint64_t rev;         /* bumped when a parameter matrices depend on changes (MS_VALUES) */
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

/* registry.c: the one table of step options. ms_opt_fields describes each ms_opt field;
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
extern const ms_opt_field ms_opt_fields[MS_NOPT];
int ms_opt_in_range(const ms_opt_field *f, double v);
double ms_opt_get(const ms_opt *o, const ms_opt_field *f);
void ms_opt_set(ms_opt *o, const ms_opt_field *f, double v);

/* model.c: the one table of model parameters, in the order of the System constructor: each
 * row gives the keyword (and property), the shape, the lower bound of its values, its
 * default, what a change invalidates and its documentation with units. The binding's
 * constructor, properties and defaults, and msim.System's documentation read it; every setter
 * ends with ms_model_changed, which bumps the revisions the row names. */
typedef enum {
  MS_P_MASS = 0,
  MS_P_STIFFNESS,
  MS_P_REST_LENGTHS,
  MS_P_FIXED,
  MS_P_GRAVITY,
  MS_P_DAMPING,
  MS_P_PLANES,
  MS_P_SPHERES,
  MS_P_CONTACT_STIFFNESS,
  MS_P_CONTACT_SCALE,
  MS_P_FRICTION,
  MS_P_FACES,
  MS_P_SELF_CONTACT,
  MS_P_SELF_THICKNESS,
  MS_P_SELF_STIFFNESS,
  MS_P_SELF_RING,
  MS_P_SELF_FRICTION,
  MS_P_THREADS,
  MS_NPARAM,
} ms_param_id;
typedef enum {
  MS_KEEPS = 0, /* no cached matrix depends on it */
  MS_VALUES,    /* matrices built from it (FMS's and L-BFGS's A, Newton's factor values) */
  MS_PATTERN,   /* also the sparsity pattern and its symbolic analysis (the fixed set) */
} ms_invalidates;
typedef struct {
  const char *name;           /* constructor keyword and property */
  const char *shape;          /* "(n,)", "(m,)", "(f,)", "(3,)", "()", "(k,4)" */
  ms_opt_type type;           /* its values: MS_REAL, MS_INT (indices, counts) or MS_FLAG */
  double lo;                  /* values must be >= lo (> lo when strict); NAN: no bound */
  int strict;                 /* 1: lo itself excluded */
  double value[3];            /* default: a scalar, or the 3 entries of a (3,) */
  int size;                   /* entries of the default; 0: no numeric default */
  ms_invalidates invalidates; /* what a change invalidates */
  const char *doc;            /* what it is, with units */
} ms_model_param;
extern const ms_model_param ms_model_params[MS_NPARAM];
void ms_model_defaults(ms_model *m);
void ms_model_changed(ms_model *m, ms_param_id id);

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
  int pairs;       /* self-contact: primitive pairs closer than twice the thickness at x_t */
  double gap;      /* self-contact: the smallest distance between primitives at x_t [m] */
  int limited;     /* self-contact: vertices whose displacement the bounds limited */
  int rounds;      /* self-contact: detections made by the displacement bounds */
  int crossings;   /* MS_ECROSSING: the (edge, triangle) pairs that cross at x_t */
  double assemble; /* seconds in assembly (implicit methods) */
  double factor;   /* seconds in factorisation */
  double solve;    /* seconds in solves */
  double broad;    /* self-contact: seconds in its broad phase (the spatial hash) */
  double narrow;   /* self-contact: seconds in its narrow phase (exact distances, pair lists) */
  double bounds;   /* self-contact: seconds in the displacement bounds (solvers' and step's) */
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
typedef struct ms_self_ws ms_self_ws;

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
  ms_self_ws *sc;            /* self-contact workspace (broad phase, pairs, bounds) */
  int sc_clean;              /* 1: x is known not to cross itself (self-contact keeps it so) */
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
/* a growable array of a workspace: p holds cap elements */
typedef struct {
  void *p;
  size_t cap;
} ms_buf;
/* make b hold at least n elements of `size` bytes (and be allocated, even for n = 0), growing
 * its cap by half or to n, keeping its first `keep`; 0, or -1 with b untouched when out of
 * memory */
int ms_grow(ms_buf *b, size_t n, size_t size, size_t keep);
/* the `more` index pairs q (2 ints each) appended to the *n pairs of out, *n counting them; 0,
 * or -1 with out and *n untouched when out of memory or the count would pass INT_MAX */
int ms_append_pairs(ms_buf *out, int *n, const int *q, int more);
/* index pairs (i, j), 2 ints each: ordered by i then j (a qsort comparator); the n pairs of p
 * sorted so, each kept once (returns how many): by a radix sort through scratch (grown to 2 n
 * ints) where it is given and can grow, else by qsort */
int ms_compare_pairs(const void *a, const void *b);
int ms_unique_pairs(int *p, int n, ms_buf *scratch);
/* the n pairs of p ordered by their first index, those with the same one kept in the order
 * they came (ms_unique_pairs's radix sort, its first index's passes alone); -1 with p as it
 * was when scratch cannot grow to 2 n ints */
int ms_group_pairs(int *p, int n, ms_buf *scratch);
/* ints in ascending order (a qsort comparator) */
int ms_compare_ints(const void *a, const void *b);

/* model.c: allocation and derived quantities */
ms_status ms_model_alloc(ms_model *m, int nv, int ns);
void ms_model_free(ms_model *m);
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

/* energies of a state [J] */
typedef struct {
  double kinetic, spring, gravity, collision, self_contact;
} ms_energies;
ms_status ms_energy(const ms_model *m, ms_data *d, ms_energies *e);
ms_status ms_forces(const ms_model *m, ms_data *d, double *f);
void ms_spring_hessian(const ms_model *m, const double *x, int s, ms_spd spd, double blk[9]);

/* step.c: one step of any method; on failure the state is left as it was */
double ms_clock(void);
ms_status ms_step(const ms_model *m, ms_data *d, ms_method method, double h, const ms_opt *o,
                  ms_info *info);

/* adjoint.c: the vector-Jacobian product of one step (the discrete adjoint). A step took the
 * state (x, v) to (xn, vn) under the external forces fext; given the adjoints ax = dL/dxn and
 * av = dL/dvn of a loss L, ms_step_vjp writes dL/d(x, v) and dL/d(parameters) through that
 * step into out; o are the step's options (read by fms: with no tol its iterations are
 * unrolled). ms_adjoint_refusal says, in a sentence, why a method or a model with options o
 * (NULL: the method's defaults aside) has no gradient here (NULL: it has one); ms_step_vjp
 * then returns MS_EINPUT. */
typedef struct {
  const double *x, *v;   /* (nv,3) the step's start [m], [m/s] */
  const double *xn, *vn; /* (nv,3) its end, as the step produced it */
  const double *fext;    /* (nv,3) the external forces it ran under [N] */
  const double *xp, *vp; /* (nv,3) bdf2: the state one step h back, NULL when the step had
                            none (then it was an implicit Euler step) */
} ms_adj_step;
typedef struct {
  double *x, *v;    /* (nv,3) dL/dx [L/m], dL/dv [L s/m] of the start state */
  double *k, *rest; /* (ns) dL/dk [L m/N], dL/dr [L/m] per spring */
  double *mass;     /* (nv) dL/dm [L/kg] per vertex */
  double *fext;     /* (nv,3) dL/df_ext [L/N] */
  double *xp, *vp;  /* (nv,3) bdf2 with s->xp: dL/dxp, dL/dvp of the state one step back */
  double damping;   /* dL/d(damping) [L s] */
  double residual;  /* implicit Euler: |grad g(xn)| [N], how far xn is from g's minimiser */
} ms_adj_out;
const char *ms_adjoint_refusal(const ms_model *m, ms_method method, const ms_opt *o);
ms_status ms_step_vjp(const ms_model *m, ms_data *d, ms_method method, double h, const ms_opt *o,
                      const ms_adj_step *s, const double *ax, const double *av, ms_adj_out *out,
                      ms_info *info);

/* chol.c: CHOLMOD set up once per process, and its version */
void ms_chol_init(void);
int ms_chol_serialised(void);
void ms_cholmod_version(int version[3]);

/* fms.c: what benchmarks and cache tests call: one kernel timed, factorisations counted */
typedef enum { MS_FMS_SETUP = 0, MS_FMS_LOCAL, MS_FMS_SOLVE } ms_fms_part;
int64_t ms_fms_factorizations(const ms_data *d);
ms_status ms_fms_kernel(const ms_model *m, ms_data *d, double h, const ms_opt *o, ms_fms_part part,
                        int reps);

/* a solver of g (registry.c's rows; contract in solvers.h) */
typedef ms_status (*ms_minimize_fn)(const ms_model *m, ms_data *d, double hs, int cap,
                                    const ms_opt *o, ms_info *info);

/* registry.c: one descriptor per method, solver of g and workspace. Everything that
 * enumerates them (the step dispatch, the option check, freeing the data, the binding's
 * tables, msim.METHODS) reads these rows; a new solver is one file and one row. */
typedef ms_status (*ms_step_fn)(const ms_model *m, ms_data *d, double h, const ms_opt *o,
                                ms_info *info);
#define MS_SELF_PREPARED 1u     /* its first vertex pass prepares the vertices itself */
#define MS_IMPULSE_FRICTION 2u  /* friction is a velocity impulse after the step */
#define MS_UNDAMPED_UNSTABLE 4u /* unstable at every step without damping (explicit Euler) */
/* it samples self-contact's barrier at given positions instead of minimising g along its step
 * (bounds.c) */
#define MS_SAMPLED_BARRIER 8u
typedef struct {
  const char *name;       /* public name of the method */
  const char *summary;    /* what it does, one sentence */
  const ms_param *params; /* its options */
  int nparam;
  ms_step_fn step; /* integrates x, v into xn, vn */
  unsigned flags;  /* MS_SELF_PREPARED | MS_IMPULSE_FRICTION | MS_UNDAMPED_UNSTABLE |
                      MS_SAMPLED_BARRIER, any of them */
  double omega_h;  /* omega h at its stability limit on an undamped linear mode; INFINITY when
                      stable at every step */
} ms_method_def;
typedef struct {
  const char *name;        /* public name (the solver option's choice) */
  ms_minimize_fn minimize; /* minimises g from d->xn */
  int cap;                 /* default iteration cap */
  uint32_t reads;          /* the options it reads: bits (1u << ms_opt_id) */
  uint32_t accel; /* the accelerations it offers where it reads one: bits (1u << ms_accel) */
} ms_solver_def;
typedef struct {
  size_t offset;            /* of the workspace's pointer in ms_data */
  void (*release)(void *w); /* frees a workspace */
} ms_workspace_def;
extern const ms_method_def ms_methods[MS_NMETHOD];
extern const ms_solver_def ms_solvers[MS_NMIN];
extern const ms_workspace_def ms_workspaces[];
extern const int ms_nworkspace;
void ms_opt_defaults(ms_method method, ms_opt *o);
int ms_opt_check(ms_method method, const ms_opt *o);
int ms_opt_refused(ms_method method, const ms_opt *o, uint32_t given);
int ms_opt_iterations(const ms_opt *o);

/* selfcontact.c: the triangles of self-contact: m->face and m->nf set, their edges, the
 * triangles and edges at each vertex and each vertex's topological ring derived (m->sc_ring
 * edges deep; what was derived before stays when memory runs out); the (triangle edge, triangle)
 * pairs that cross at x, touching included (an exact count, usable as an oracle) */
ms_status ms_model_faces(ms_model *m);
double ms_mean_face_edge(const ms_model *m, const double *x);
ms_status ms_self_crossings(const ms_model *m, ms_data *d, const double *x, int *count);

/* stability.c: the Gershgorin bound on the stiffest mode and each method's stable step */
double ms_omega_max(const ms_model *m);
double ms_stable_step(const ms_model *m, ms_method method, double omega);

#endif
