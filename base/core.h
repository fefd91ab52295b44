/* core.h -- internal helpers every module uses: errors, host memory, logging.
 * The context itself is defined in context.h; modules that only report errors
 * or allocate need nothing else. All helpers accept ctx == NULL (libc memory,
 * message dropped). */
#ifndef QJIT_CORE_H
#define QJIT_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include "qjit.h"

#if defined(__GNUC__)
#  define QJIT__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define QJIT__PRINTF(f, a)
#endif

/* Records a failure on ctx and returns st, so callers write
 * `return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "M must be > 0, got %lld", m);` */
qjit_status qjit__error(qjit_context *ctx, qjit_status st, const char *fmt, ...) QJIT__PRINTF(3, 4);
qjit_status qjit__verror(qjit_context *ctx, qjit_status st, const char *fmt, va_list ap);
/* Appends more detail (a log, a path) to the current last error. */
void qjit__error_append(qjit_context *ctx, const char *fmt, ...) QJIT__PRINTF(2, 3);
/* qjit_context_create's failure message, kept per thread for
 * qjit_last_error(NULL) once the context is gone (keep: the context's
 * message; set: a message, "" on success). */
void qjit__keep_create_error(const qjit_context *ctx);
void qjit__set_create_error(const char *message);
/* One diagnostic line to the context's log callback. */
void qjit__log(qjit_context *ctx, const char *fmt, ...) QJIT__PRINTF(2, 3);

void *qjit__alloc(qjit_context *ctx, size_t n);          /* NULL on failure */
void *qjit__calloc(qjit_context *ctx, size_t n);
void *qjit__realloc(qjit_context *ctx, void *p, size_t old_n, size_t new_n);
void qjit__free(qjit_context *ctx, void *p, size_t n);   /* n may be 0 if unknown to libc */
char *qjit__strdup(qjit_context *ctx, const char *s);
/* Frees a string from qjit__strdup / qjit__printf. */
void qjit__strfree(qjit_context *ctx, char *s);
char *qjit__printf(qjit_context *ctx, const char *fmt, ...) QJIT__PRINTF(2, 3);

/* Monotonic seconds, for the timings qjit reports. */
double qjit__now(void);

/* Overflow-checked size arithmetic: return 0 on overflow. */
int qjit__mul_size(size_t a, size_t b, size_t *out);
int qjit__add_size(size_t a, size_t b, size_t *out);

#endif
