/* core.c -- errors, host memory and logging, all hanging off the context. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"
#include "context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char no_context_message[] =
    "no context: pass a qjit_context to read error details";

const char *qjit_status_string(qjit_status status)
{
    switch (status) {
#define QJIT__STATUS_TEXT(name, value, text) case QJIT_##name: return text;
    QJIT_STATUS_MAP(QJIT__STATUS_TEXT)
#undef QJIT__STATUS_TEXT
    }
    return "unknown status";
}

const char *qjit_status_name(qjit_status status)
{
    switch (status) {
#define QJIT__STATUS_NAME(name, value, text) case QJIT_##name: return "QJIT_" #name;
    QJIT_STATUS_MAP(QJIT__STATUS_NAME)
#undef QJIT__STATUS_NAME
    }
    return "QJIT_UNKNOWN";
}

unsigned qjit_version_number(void) { return QJIT_VERSION_NUMBER; }
const char *qjit_version_string(void) { return QJIT_VERSION_STRING; }

qjit_status qjit__verror(qjit_context *ctx, qjit_status st, const char *fmt, va_list ap)
{
    if (!ctx)
        return st;
    pthread_mutex_lock(&ctx->error_lock);
    vsnprintf(ctx->last_error, sizeof ctx->last_error, fmt, ap);
    pthread_mutex_unlock(&ctx->error_lock);
    return st;
}

qjit_status qjit__error(qjit_context *ctx, qjit_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    qjit__verror(ctx, st, fmt, ap);
    va_end(ap);
    return st;
}

void qjit__error_append(qjit_context *ctx, const char *fmt, ...)
{
    if (!ctx)
        return;
    pthread_mutex_lock(&ctx->error_lock);
    size_t used = strlen(ctx->last_error);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->last_error + used, sizeof ctx->last_error - used, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&ctx->error_lock);
}

void qjit__log(qjit_context *ctx, const char *fmt, ...)
{
    if (!ctx || !ctx->log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ctx->log(ctx->log_ud, line);
}

/* Why this thread's last qjit_context_create failed ("" if none did): the
 * context that held the message is gone. */
static _Thread_local char create_error[1024];

void qjit__keep_create_error(const qjit_context *ctx)
{
    size_t n = strnlen(ctx->last_error, sizeof create_error - 1);
    memcpy(create_error, ctx->last_error, n);
    create_error[n] = 0;
}

void qjit__set_create_error(const char *message)
{
    snprintf(create_error, sizeof create_error, "%s", message);
}

static const char *without_context(void)
{
    return create_error[0] ? create_error : no_context_message;
}

const char *qjit_last_error(const qjit_context *ctx)
{
    return ctx ? ctx->last_error : without_context();
}

size_t qjit_last_error_copy(const qjit_context *ctx, char *buf, size_t size)
{
    if (!ctx) {
        const char *m = without_context();
        if (buf && size)
            snprintf(buf, size, "%s", m);
        return strlen(m);
    }
    qjit_context *c = (qjit_context *)ctx;
    pthread_mutex_lock(&c->error_lock);
    size_t len = strlen(c->last_error);
    if (buf && size)
        snprintf(buf, size, "%s", c->last_error);
    pthread_mutex_unlock(&c->error_lock);
    return len;
}

void *qjit__realloc(qjit_context *ctx, void *p, size_t old_n, size_t new_n)
{
    if (ctx && ctx->host_realloc)
        return ctx->host_realloc(ctx->host_ud, p, old_n, new_n);
    if (new_n == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, new_n);
}

void *qjit__alloc(qjit_context *ctx, size_t n) { return qjit__realloc(ctx, NULL, 0, n ? n : 1); }

void *qjit__calloc(qjit_context *ctx, size_t n)
{
    void *p = qjit__alloc(ctx, n);
    if (p)
        memset(p, 0, n ? n : 1);
    return p;
}

void qjit__free(qjit_context *ctx, void *p, size_t n)
{
    if (p)
        qjit__realloc(ctx, p, n, 0);
}

/* Strings carry their size in a hidden prefix so they can be released through
 * an allocator that wants the old size (Lua's convention). */
char *qjit__strdup(qjit_context *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    size_t *block = qjit__alloc(ctx, sizeof(size_t) + n);
    if (!block)
        return NULL;
    block[0] = sizeof(size_t) + n;
    memcpy(block + 1, s, n);
    return (char *)(block + 1);
}

void qjit__strfree(qjit_context *ctx, char *s)
{
    if (!s)
        return;
    size_t *block = (size_t *)s - 1;
    qjit__free(ctx, block, block[0]);
}

char *qjit__printf(qjit_context *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    size_t *block = qjit__alloc(ctx, sizeof(size_t) + (size_t)n + 1);
    if (!block)
        return NULL;
    block[0] = sizeof(size_t) + (size_t)n + 1;
    va_start(ap, fmt);
    vsnprintf((char *)(block + 1), (size_t)n + 1, fmt, ap);
    va_end(ap);
    return (char *)(block + 1);
}

void qjit_free(qjit_context *ctx, void *ptr) { qjit__strfree(ctx, ptr); }

double qjit__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int qjit__mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > (size_t)-1 / a)
        return 0;
    *out = a * b;
    return 1;
}

int qjit__add_size(size_t a, size_t b, size_t *out)
{
    if (b > (size_t)-1 - a)
        return 0;
    *out = a + b;
    return 1;
}
