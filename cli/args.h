/* args.h -- the strict option parsing that `qjit bench` (bench_args.c) and
 * `qjit quant-error` (accuracy.c) share, so that both commands take and
 * refuse the same texts with the same sentences. Nothing here touches the
 * GPU or the library.
 *
 * The rules:
 *  - integers are decimal digits, with a leading '-' only where the caller
 *    allows a sign; no '+', no spaces, no 0x (strtoll would take all three,
 *    so the text is checked before it is converted);
 *  - seeds alone also take 0x hex and 0 octal, as strtoull reads them, but
 *    no sign (strtoull would wrap "-1" silently);
 *  - a list is items between separators, spaces around an item trimmed; an
 *    empty item ("1,,4", "4096x4096,", "") is refused, since it is a typo,
 *    not a shorter list;
 *  - an option must be a known one, and one that takes a value must be
 *    followed by it; a name or a path must not be empty;
 *  - --help or -h stops parsing, so that what follows it is not judged.
 * A refusal is one sentence quoting the offending text ('...');
 * qa_parse_options puts the option's name in front ("--m: '0' must be at
 * least 1"), so every message names the option and the text.
 *
 * Every fallible call returns -1 on failure with the sentence in err (err
 * may be NULL, errlen 0: the sentence is then dropped). */
#ifndef QJIT_CLI_ARGS_H
#define QJIT_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* What is trimmed around a list item or taken as a blank line. */
#define QA_SPACES " \t\r\n"

/* Formats the sentence into err; does nothing when err is NULL or errlen is
 * 0, so that a caller that wants only the status needs no buffer. */
__attribute__((format(printf, 3, 4))) void qa_say(char *err, size_t errlen, const char *fmt, ...);

/* '0' .. '9' only: isdigit depends on the locale and wants an unsigned char. */
int qa_is_digit(char c);

/* Reads a decimal integer at s: digits only, a '-' first if sign is set.
 * Returns where it stopped, or NULL with *overflow set when the value does
 * not fit a long long, or NULL alone when there is no number at s. */
const char *qa_read_ll(const char *s, int sign, long long *v, int *overflow);

/* Called with each list item [b, e), spaces trimmed; 0 to go on, -1 (with
 * the sentence in err) to stop. */
typedef int (*qa_item_fn)(const char *b, const char *e, void *ud, char *err, size_t errlen);
/* Calls item for each item of text between any of the characters of seps.
 * Returns 0, or -1 at the first empty item ("empty item in '<text>'") or
 * the first item that item refuses. */
int qa_each_item(const char *text, const char *seps, qa_item_fn item, void *ud, char *err, size_t errlen);

/* A list of sparsity budgets being read (qa_budget_item as qa_each_item's
 * item, ud a qa_budgets): each a decimal in [0, 1] spelled with digits and
 * at most one point ("0.05", ".1", "1"), at most six decimals, no sign or
 * exponent, none twice, at most max. */
typedef struct qa_budgets {
    double *v;
    int n, max;
} qa_budgets;
int qa_budget_item(const char *b, const char *e, void *ud, char *err, size_t errlen);

/* A seed: decimal, 0x hex or 0 octal, no sign, the whole text. */
int qa_parse_seed(const char *text, uint64_t *out, char *err, size_t errlen);

/* How an option is given. */
typedef enum qa_kind {
    QA_FLAG,     /* alone: --no-peers */
    QA_VALUE,    /* with a value that the command checks: a number, a list, a file */
    QA_NAME      /* with a value that is a name or an output path: an empty one is
                    refused here, as a slip (an unset shell variable), not a request */
} qa_kind;

typedef struct qa_option {
    const char *name;
    qa_kind kind;
} qa_option;

/* A command's options and how it applies one to its arguments struct:
 * take(args, option, value, msg, msglen) returns 0, or -1 with the sentence
 * in msg; value is NULL for a flag. */
typedef struct qa_command {
    const qa_option *options;
    size_t count;
    int (*take)(void *args, const char *option, const char *value, char *msg, size_t msglen);
} qa_command;

/* Walks the options of argv (argv[0], the command's name, is skipped) and
 * hands each to cmd->take. "--help" or "-h" stops the walk at once: what
 * came before it has been taken, what follows is not looked at, and the
 * result is 1. Otherwise 0 once every option is taken, or -1 at the first
 * one refused, with "unknown option '<o>'", "<o> needs a value", "<o>: the
 * value is empty" or "<o>: <take's sentence>" in err. msg (msglen bytes,
 * at least 1) is where take writes, so its size bounds take's sentence.
 * args may hold part of the options after a failure: callers parse into a
 * copy and keep it only on success. */
int qa_parse_options(int argc, char **argv, const qa_command *cmd, void *args, char *msg, size_t msglen, char *err,
                     size_t errlen);

#endif
