/* disk.h: whether a triangle mesh is one topological disk (disk.c). Internal to the engine. */
#ifndef MSIM_DISK_H
#define MSIM_DISK_H

#include "msim.h"

/* m->disk, its triangles' neighbours m->ftwin and the triangles on its boundary m->fbound
 * (m->nfbound of them, ascending): whether m's triangles form one topological disk
 * holding every vertex (connected, each edge in at most two triangles that run along it in
 * opposite directions, each vertex's triangles one fan, V - E + F = 1). MS_ENOMEM when out of
 * memory (m as it was) */
ms_status ms_model_disk(ms_model *m);

#endif
