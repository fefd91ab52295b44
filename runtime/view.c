/* view.c -- views into a packed-weight buffer (view.h). */
#include "view.h"
#include "layout.h"

qjit__weights_view qjit__view_rows(const qjit__weights_view *v, int64_t n0, int64_t rows)
{
    qjit__weights_view p = *v;
    int64_t nb = n0 / QJIT__PACK_N, slabs = v->N / QJIT__PACK_N;
    p.N = rows;
    for (int i = 0; i < v->nsections; i++) {
        if (qjit__layer_section(v, i))
            continue;            /* the layer's own: whole in every view */
        size_t per_slab = v->sections[i].bytes / (size_t)slabs;
        p.sections[i].offset += (size_t)nb * per_slab;
        p.sections[i].bytes = (size_t)(rows / QJIT__PACK_N) * per_slab;
    }
    return p;
}
