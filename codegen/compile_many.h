/* compile_many.h -- qjit_compile over many keys on every CPU. */
#ifndef QJIT_COMPILE_MANY_H
#define QJIT_COMPILE_MANY_H

#include "qjit.h"

/* qjit_compile_many, with progress(ud, done, n) called on the calling
 * thread after each key it compiles (NULL: none). */
qjit_status qjit__compile_many(qjit_context *ctx, const char *const *keys, int n, const char *arch, int threads,
                               qjit_compile_result *results, void (*progress)(void *ud, int done, int n), void *ud);

#endif
