/* engine.h: the engine's internal headers, one per capability, for its own files; the
 * binding includes msim.h alone. */
#ifndef MSIM_ENGINE_H
#define MSIM_ENGINE_H

#include "msim.h"
#include "threads.h"
#include "spring.h"
#include "contact.h"
#include "potential.h"
#include "chol.h"
#include "solvers.h"
#include "methods.h"
#include "self.h"

#endif
