/* args.c -- the option parsing rules shared by bench_args.c and accuracy.c;
 * see args.h. */
#include "args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void qa_say(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int qa_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

const char *qa_read_ll(const char *s, int sign, long long *v, int *overflow)
{
    *overflow = 0;
    /* A digit (or '-' and a digit) first: strtoll alone would also skip
     * spaces and take '+'. */
    if (!qa_is_digit(s[0]) && !(sign && s[0] == '-' && qa_is_digit(s[1])))
        return NULL;
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    if (errno == ERANGE) {
        *overflow = 1;
        return NULL;
    }
    return end;
}

int qa_each_item(const char *text, const char *seps, qa_item_fn item, void *ud, char *err, size_t errlen)
{
    for (const char *p = text;;) {
        const char *end = p + strcspn(p, seps), *b = p, *e = end;
        while (b < e && strchr(QA_SPACES, *b))
            b++;
        while (e > b && strchr(QA_SPACES, e[-1]))
            e--;
        if (b == e) {
            qa_say(err, errlen, "empty item in '%s'", text);
            return -1;
        }
        if (item(b, e, ud, err, errlen))
            return -1;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

int qa_parse_seed(const char *text, uint64_t *out, char *err, size_t errlen)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = qa_is_digit(text[0]) ? strtoull(text, &end, 0) : 0;
    if (!end || *end) {
        qa_say(err, errlen, "'%s' is not a number (decimal, 0x hex or 0 octal)", text);
        return -1;
    }
    if (errno == ERANGE) {
        qa_say(err, errlen, "'%s' is out of range", text);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

static const qa_option *find_option(const qa_command *cmd, const char *name)
{
    for (size_t k = 0; k < cmd->count; k++)
        if (!strcmp(name, cmd->options[k].name))
            return &cmd->options[k];
    return NULL;
}

int qa_parse_options(int argc, char **argv, const qa_command *cmd, void *args, char *msg, size_t msglen, char *err,
                     size_t errlen)
{
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h"))
            return 1;
        const qa_option *opt = find_option(cmd, o);
        if (!opt) {
            qa_say(err, errlen, "unknown option '%s'", o);
            return -1;
        }
        if (opt->kind != QA_FLAG) {
            if (i + 1 >= argc) {
                qa_say(err, errlen, "%s needs a value", o);
                return -1;
            }
            v = argv[++i];
        }
        msg[0] = '\0';
        int rc;
        if (opt->kind == QA_NAME && !*v) {
            snprintf(msg, msglen, "the value is empty");
            rc = -1;
        } else {
            rc = cmd->take(args, o, v, msg, msglen);
        }
        if (rc) {
            qa_say(err, errlen, "%s: %s", o, msg);
            return -1;
        }
    }
    return 0;
}

int qa_budget_item(const char *b, const char *e, void *ud, char *err, size_t errlen)
{
    qa_budgets *l = ud;
    int len = (int)(e - b), digits = 0, point = 0, decimals = 0;
    for (const char *p = b; p < e; p++) {
        if (*p == '.' && !point) {
            point = 1;
        } else if (qa_is_digit(*p)) {
            digits++;
            decimals += point;
        } else {
            digits = -1000;
            break;
        }
    }
    char text[32];
    if (digits <= 0 || decimals > 6 || len >= (int)sizeof text) {
        qa_say(err, errlen, "'%.*s' is not a budget (a decimal in [0, 1] with at most 6 decimals, e.g. 0.05)", len,
               b);
        return -1;
    }
    memcpy(text, b, (size_t)len);
    text[len] = '\0';
    double v = strtod(text, NULL);
    if (v > 1.0) {
        qa_say(err, errlen, "'%s' is not a budget in [0, 1]", text);
        return -1;
    }
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v) {
            qa_say(err, errlen, "budget '%s' is given twice", text);
            return -1;
        }
    if (l->n == l->max) {
        qa_say(err, errlen, "more than %d budgets (at '%s')", l->max, text);
        return -1;
    }
    l->v[l->n++] = v;
    return 0;
}
