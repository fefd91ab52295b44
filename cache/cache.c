/* cache.c -- the on-disk binary cache: atomic store, verified load, listing,
 * clearing and LRU eviction. Mechanism only (see cache.h for the contract).
 *
 * Entry file layout (all integers little-endian):
 *
 *   offset  size  field
 *        0     8  magic "QJITBIN1"
 *        8     4  format version (1)
 *       12     4  key_len
 *       16     4  meta_len
 *       20     4  reserved, 0
 *       24     8  payload_len
 *       32    32  SHA-256 of key bytes || meta bytes || payload bytes
 *       64     -  key bytes, meta bytes, payload bytes (no NULs stored)
 *
 * Every header byte is checked on load (magic, version, reserved == 0, the
 * lengths through the exact file size, the digest through the content), so
 * any damage anywhere in the file is detected.
 *
 * Files are opened relative to a descriptor of the folder that was checked,
 * so the folder cannot be swapped between the check and the use. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "cache.h"
#include "core.h"
#include "hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_MAGIC "QJITBIN1"
#define ENTRY_VERSION 1u
#define HEADER_BYTES 64
/* Manifests are small; anything larger is not one of ours. */
#define TEXT_MAX_BYTES ((size_t)16 << 20)
/* Verification streams payloads through a buffer of this size when the
 * payload itself is not wanted (listing). */
#define SCRATCH_BYTES ((size_t)64 << 10)
#define PROBLEM_MAX 256
/* Longest file name accepted: the temporary name adds at most 40 bytes and
 * must stay under NAME_MAX (255). */
#define NAME_MAX_LEN 200

static const char planted_text[] =
    "qjit refuses to load binaries another user could have planted";

/*------------------------------------------------------------------------
 * Small helpers
 *------------------------------------------------------------------------*/

/* strerror is not thread-safe; strerror_r comes in two flavours. */
static const char *errno_text(int err, char *buf, size_t size)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return strerror_r(err, buf, size);
#else
    if (strerror_r(err, buf, size) != 0)
        snprintf(buf, size, "error %d", err);
    return buf;
#endif
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* A plain file name: no folder part, not "." or "..", short enough for the
 * temporary name built from it. */
static int name_ok(const char *name)
{
    return name && name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 &&
           strcmp(name, "..") != 0 && strlen(name) <= NAME_MAX_LEN;
}

static qjit_status check_args(qjit_context *ctx, const char *dir, const char *name)
{
    if (!dir || !dir[0])
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "cache folder path is empty or NULL");
    if (!name_ok(name))
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT,
                           "cache file name \"%s\" is not a plain file name (no '/', at most %d bytes)",
                           name ? name : "(null)", NAME_MAX_LEN);
    return QJIT_OK;
}

static int close_keep_errno(int fd)
{
    int saved = errno;
    int rc = fd >= 0 ? close(fd) : 0;
    errno = saved;
    return rc;
}

/* Reads up to n bytes, retrying on EINTR and short reads. Returns the bytes
 * read (less than n only at end of file) or -1 with errno set. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    size_t done = 0;
    while (done < n) {
        ssize_t r = read(fd, p + done, n - done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

static int write_full(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 16 hex digits for temporary names. The kernel's generator normally; if it
 * is unavailable, a mix of clocks, pid and an address (O_EXCL catches the
 * rare collision, and the caller retries with a fresh value). */
static void random_hex(char out[17], unsigned attempt)
{
    uint8_t b[8];
    if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t)sizeof b) {
        struct timespec ts[2];
        clock_gettime(CLOCK_REALTIME, &ts[0]);
        clock_gettime(CLOCK_MONOTONIC, &ts[1]);
        uint64_t mix[6] = {(uint64_t)ts[0].tv_sec, (uint64_t)ts[0].tv_nsec,
                           (uint64_t)ts[1].tv_nsec, (uint64_t)getpid(),
                           (uint64_t)(uintptr_t)&b, attempt};
        uint64_t h = qjit__hash64(mix, sizeof mix, 0x716a6974u);
        for (int i = 0; i < 8; i++)
            b[i] = (uint8_t)(h >> (8 * i));
    }
    qjit__hex(b, sizeof b, out);
}

/*------------------------------------------------------------------------
 * Folder and file checks
 *------------------------------------------------------------------------*/

static qjit_status check_dir_stat(qjit_context *ctx, const char *dir, const struct stat *st)
{
    if (!S_ISDIR(st->st_mode))
        return qjit__error(ctx, QJIT_CACHE,
                           "cache folder %s exists but is not a directory. Fix: remove it, or set "
                           "QJIT_CACHE_DIR to another folder", dir);
    if (st->st_uid != geteuid())
        return qjit__error(ctx, QJIT_CACHE_INSECURE,
                           "cache folder %s is owned by uid %lu, not by you (uid %lu); %s. Fix: set "
                           "QJIT_CACHE_DIR to a private folder you own",
                           dir, (unsigned long)st->st_uid, (unsigned long)geteuid(), planted_text);
    if (st->st_mode & 022)
        return qjit__error(ctx, QJIT_CACHE_INSECURE,
                           "cache folder %s is writable by group/others (mode %04o); %s. Fix: chmod "
                           "700 %s, or set QJIT_CACHE_DIR to a private folder",
                           dir, (unsigned)(st->st_mode & 07777), planted_text, dir);
    return QJIT_OK;
}

/* Opens dir for the *at() calls and checks it. QJIT_NOT_FOUND, with no
 * message, if it does not exist. */
static qjit_status dir_open(qjit_context *ctx, const char *dir, int *dfd)
{
    char eb[128];
    *dfd = -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT)
            return QJIT_NOT_FOUND;
        if (err == ENOTDIR)
            return qjit__error(ctx, QJIT_CACHE,
                               "cache folder %s is not a directory (it, or a folder above it, is a "
                               "file). Fix: remove it, or set QJIT_CACHE_DIR to another folder", dir);
        return qjit__error(ctx, QJIT_CACHE, "cannot open cache folder %s: %s", dir,
                           errno_text(err, eb, sizeof eb));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return qjit__error(ctx, QJIT_CACHE, "cannot inspect cache folder %s: %s", dir,
                           errno_text(err, eb, sizeof eb));
    }
    qjit_status s = check_dir_stat(ctx, dir, &st);
    if (s != QJIT_OK) {
        close(fd);
        return s;
    }
    *dfd = fd;
    return QJIT_OK;
}

/* Opens file `name` of the folder for reading. Refuses links, special files
 * and files another user owns or can write: QJIT_CACHE_INSECURE. Returns
 * QJIT_NOT_FOUND if absent, QJIT_IO if it cannot be opened. Sets no message;
 * `problem` says what is wrong ("writable by group/others (mode 0664)"). */
static qjit_status file_open(int dfd, const char *name, int *fd_out, struct stat *st,
                             char *problem, size_t psize)
{
    char eb[128];
    *fd_out = -1;
    problem[0] = '\0';
    /* O_NONBLOCK: a FIFO planted under an entry name must not hang us. */
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT)
            return QJIT_NOT_FOUND;
        if (err == ELOOP) {
            snprintf(problem, psize, "a symbolic link");
            return QJIT_CACHE_INSECURE;
        }
        snprintf(problem, psize, "unreadable (%s)", errno_text(err, eb, sizeof eb));
        return QJIT_IO;
    }
    qjit_status s = QJIT_OK;
    if (fstat(fd, st) != 0) {
        snprintf(problem, psize, "unreadable (%s)", errno_text(errno, eb, sizeof eb));
        s = QJIT_IO;
    } else if (!S_ISREG(st->st_mode)) {
        snprintf(problem, psize, "not a regular file");
        s = QJIT_CACHE_INSECURE;
    } else if (st->st_uid != geteuid()) {
        snprintf(problem, psize, "owned by uid %lu, not by you (uid %lu)",
                 (unsigned long)st->st_uid, (unsigned long)geteuid());
        s = QJIT_CACHE_INSECURE;
    } else if (st->st_mode & 022) {
        snprintf(problem, psize, "writable by group/others (mode %04o)",
                 (unsigned)(st->st_mode & 07777));
        s = QJIT_CACHE_INSECURE;
    }
    if (s != QJIT_OK) {
        close(fd);
        return s;
    }
    *fd_out = fd;
    return QJIT_OK;
}

/* The message for a file_open failure; `what` is "cache entry" or "cache file". */
static qjit_status file_open_error(qjit_context *ctx, qjit_status s, const char *what,
                                   const char *dir, const char *name, const char *problem)
{
    if (s == QJIT_CACHE_INSECURE)
        return qjit__error(ctx, s, "%s %s/%s is %s; %s. Fix: delete it (qjit recreates it), and "
                           "check who else can write to %s",
                           what, dir, name, problem, planted_text, dir);
    return qjit__error(ctx, s, "cannot open %s %s/%s: %s", what, dir, name, problem);
}

/*------------------------------------------------------------------------
 * Folder creation and resolution
 *------------------------------------------------------------------------*/

/* Creates one component of a path if it is missing (0700 exactly, whatever
 * the umask). Existing components are left alone. */
static qjit_status make_component(qjit_context *ctx, const char *prefix, const char *dir)
{
    char eb[128];
    struct stat st;
    if (stat(prefix, &st) == 0)
        return QJIT_OK;
    if (errno != ENOENT)
        return qjit__error(ctx, QJIT_CACHE, "cannot create cache folder %s: %s is not accessible (%s)",
                           dir, prefix, errno_text(errno, eb, sizeof eb));
    if (mkdir(prefix, 0700) == 0) {
        /* The umask can only have removed bits; put the owner's back. */
        (void)chmod(prefix, 0700);
        return QJIT_OK;
    }
    if (errno == EEXIST)        /* another process made it just now */
        return QJIT_OK;
    return qjit__error(ctx, QJIT_CACHE, "cannot create cache folder %s: mkdir %s failed (%s)", dir,
                       prefix, errno_text(errno, eb, sizeof eb));
}

qjit_status qjit__cache_open_dir(qjit_context *ctx, const char *dir)
{
    if (!dir || !dir[0])
        return qjit__error(ctx, QJIT_CACHE, "cache folder path is empty. Fix: set QJIT_CACHE_DIR");
    char *path = qjit__strdup(ctx, dir);
    if (!path)
        return qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory opening cache folder %s", dir);
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        path[--len] = '\0';

    /* mkdir -p: walk the components left to right; p starts past a leading
     * '/' so the root itself is the first prefix only for "/". */
    qjit_status s = QJIT_OK;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        s = make_component(ctx, path, dir);
        *p = saved;
        if (s != QJIT_OK || saved == '\0')
            break;
    }
    if (s != QJIT_OK)
        goto out;

    int dfd;
    s = dir_open(ctx, path, &dfd);
    if (s == QJIT_NOT_FOUND)
        s = qjit__error(ctx, QJIT_CACHE, "cache folder %s disappeared while being created", dir);
    if (s == QJIT_OK)
        close(dfd);
out:
    qjit__strfree(ctx, path);
    return s;
}

/*------------------------------------------------------------------------
 * Entries: names, atomic writes, verified reads
 *------------------------------------------------------------------------*/

void qjit__cache_entry_name(const char *key_text, char name[80])
{
    char hex[65];
    qjit__sha256_hex(key_text, strlen(key_text), hex);
    snprintf(name, 80, "%s.qjb", hex);
}

typedef struct piece {
    const void *data;
    size_t bytes;
} piece;

/* Writes the pieces to `name` of dir atomically: a fresh temporary file in
 * the same folder (O_EXCL, 0600), full writes, fsync, rename over the final
 * name, then fsync of the folder so the rename itself is durable. The
 * temporary file is removed on every failure path. */
static void reap_stale_temps(qjit_context *ctx, const char *dir, int dfd);

/* Writes dir/name from pieces through a temporary file and a rename. With
 * reap (entry writes), then removes the temporary files writers killed
 * between creating theirs and the rename left behind. */
static qjit_status atomic_write(qjit_context *ctx, const char *dir, const char *name,
                                const piece *pieces, int count, const char *what, int reap)
{
    char eb[128], tmp[NAME_MAX_LEN + 64], hex[17];
    int dfd = -1, fd = -1;

    qjit_status s = qjit__cache_open_dir(ctx, dir);
    if (s != QJIT_OK)
        return s;
    s = dir_open(ctx, dir, &dfd);
    if (s == QJIT_NOT_FOUND)
        return qjit__error(ctx, QJIT_CACHE, "cache folder %s disappeared while writing %s %s",
                           dir, what, name);
    if (s != QJIT_OK)
        return s;

    for (unsigned attempt = 0; attempt < 16; attempt++) {
        random_hex(hex, attempt);
        snprintf(tmp, sizeof tmp, ".%s.tmp.%ld.%s", name, (long)getpid(), hex);
        fd = openat(dfd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0 || errno != EEXIST)
            break;
    }
    if (fd < 0) {
        s = qjit__error(ctx, QJIT_CACHE, "cannot create a temporary file in cache folder %s: %s",
                        dir, errno_text(errno, eb, sizeof eb));
        goto close_dir;
    }
    (void)fchmod(fd, 0600);     /* exact mode, whatever the umask */

    for (int i = 0; i < count; i++) {
        if (pieces[i].bytes && write_full(fd, pieces[i].data, pieces[i].bytes) != 0) {
            s = qjit__error(ctx, QJIT_IO, "cannot write %s %s/%s: %s", what, dir, name,
                            errno_text(errno, eb, sizeof eb));
            goto remove_tmp;
        }
    }
    if (fsync(fd) != 0) {
        s = qjit__error(ctx, QJIT_IO, "cannot flush %s %s/%s to disk: %s", what, dir, name,
                        errno_text(errno, eb, sizeof eb));
        goto remove_tmp;
    }
    int rc = close(fd);
    fd = -1;
    if (rc != 0) {
        s = qjit__error(ctx, QJIT_IO, "cannot write %s %s/%s: %s", what, dir, name,
                        errno_text(errno, eb, sizeof eb));
        goto remove_tmp;
    }
    if (renameat(dfd, tmp, dfd, name) != 0) {
        s = qjit__error(ctx, QJIT_IO, "cannot put %s %s/%s in place: %s", what, dir, name,
                        errno_text(errno, eb, sizeof eb));
        goto remove_tmp;
    }
    (void)fsync(dfd);           /* best effort: not every file system allows it */
    if (reap)
        reap_stale_temps(ctx, dir, dfd);
    goto close_dir;

remove_tmp:
    close_keep_errno(fd);
    (void)unlinkat(dfd, tmp, 0);
close_dir:
    close(dfd);
    return s;
}

qjit_status qjit__cache_store(qjit_context *ctx, const char *dir, const char *name,
                              const char *key, const char *meta,
                              const void *payload, size_t payload_bytes)
{
    qjit_status s = check_args(ctx, dir, name);
    if (s != QJIT_OK)
        return s;
    if (!key)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "cache entry %s: key text is NULL", name);
    if (!payload && payload_bytes)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "cache entry %s: payload is NULL but %zu bytes long",
                           name, payload_bytes);
    if (!meta)
        meta = "";
    size_t key_len = strlen(key), meta_len = strlen(meta);
    if (key_len > UINT32_MAX || meta_len > UINT32_MAX)
        return qjit__error(ctx, QJIT_OVERFLOW, "cache entry %s: key or meta text longer than 4 GiB", name);

    uint8_t header[HEADER_BYTES];
    memset(header, 0, sizeof header);
    memcpy(header, ENTRY_MAGIC, 8);
    put_u32(header + 8, ENTRY_VERSION);
    put_u32(header + 12, (uint32_t)key_len);
    put_u32(header + 16, (uint32_t)meta_len);
    put_u32(header + 20, 0);
    put_u64(header + 24, (uint64_t)payload_bytes);
    qjit__sha256 sha;
    qjit__sha256_init(&sha);
    qjit__sha256_update(&sha, key, key_len);
    qjit__sha256_update(&sha, meta, meta_len);
    if (payload_bytes)
        qjit__sha256_update(&sha, payload, payload_bytes);
    qjit__sha256_final(&sha, header + 32);

    piece pieces[4] = {{header, sizeof header}, {key, key_len}, {meta, meta_len},
                       {payload, payload_bytes}};
    return atomic_write(ctx, dir, name, pieces, 4, "cache entry", 1);
}

static void *alloc_bytes(qjit_context *ctx, size_t n) { return qjit__alloc(ctx, n ? n : 1); }
static void free_bytes(qjit_context *ctx, void *p, size_t n) { qjit__free(ctx, p, n ? n : 1); }

/* Reads `want` bytes into dst (or, with dst NULL, through scratch) and hashes
 * them. Returns 0, 1 on early end of file, -1 on a read error (errno set). */
static int read_hashed(int fd, qjit__sha256 *sha, uint8_t *dst, uint64_t want, uint8_t *scratch)
{
    while (want > 0) {
        size_t chunk = dst ? (size_t)want : (want < SCRATCH_BYTES ? (size_t)want : SCRATCH_BYTES);
        uint8_t *buf = dst ? dst : scratch;
        ssize_t got = read_full(fd, buf, chunk);
        if (got < 0)
            return -1;
        qjit__sha256_update(sha, buf, (size_t)got);
        if ((size_t)got < chunk)
            return 1;
        want -= chunk;
        if (dst)
            dst += chunk;
    }
    return 0;
}

/* Reads and verifies the entry open on fd (a checked regular file of
 * file_bytes). Key and meta are always returned in *out; the payload only if
 * keep_payload (otherwise it is streamed through a small buffer and
 * out->payload stays NULL). Returns QJIT_OK; QJIT_CACHE_CORRUPT or QJIT_IO
 * with `problem` set (a phrase that reads after "is": "truncated (412 of
 * 9000 bytes)"); or QJIT_OUT_OF_MEMORY. Nothing is returned on failure. */
static qjit_status read_entry(qjit_context *ctx, int fd, uint64_t file_bytes, const char *expected_key,
                              int keep_payload, qjit__cache_entry *out, char *problem, size_t psize)
{
    char eb[128];
    uint8_t header[HEADER_BYTES], digest[32];
    char *key = NULL, *meta = NULL;
    uint8_t *payload = NULL, *scratch = NULL;
    size_t payload_alloc = 0;
    qjit_status s = QJIT_CACHE_CORRUPT;

    memset(out, 0, sizeof *out);
    problem[0] = '\0';
    if (file_bytes < HEADER_BYTES) {
        snprintf(problem, psize, "truncated (%llu bytes, shorter than its %d-byte header)",
                 (unsigned long long)file_bytes, HEADER_BYTES);
        return QJIT_CACHE_CORRUPT;
    }
    ssize_t got = read_full(fd, header, sizeof header);
    if (got < 0) {
        snprintf(problem, psize, "unreadable (%s)", errno_text(errno, eb, sizeof eb));
        return QJIT_IO;
    }
    if (got < HEADER_BYTES) {
        snprintf(problem, psize, "truncated (%lld bytes, shorter than its %d-byte header)",
                 (long long)got, HEADER_BYTES);
        return QJIT_CACHE_CORRUPT;
    }
    if (memcmp(header, ENTRY_MAGIC, 8) != 0) {
        snprintf(problem, psize, "not a qjit cache entry (bad magic)");
        return QJIT_CACHE_CORRUPT;
    }
    uint32_t version = get_u32(header + 8), key_len = get_u32(header + 12);
    uint32_t meta_len = get_u32(header + 16), reserved = get_u32(header + 20);
    uint64_t payload_len = get_u64(header + 24);
    if (version != ENTRY_VERSION) {
        snprintf(problem, psize, "in format version %lu, which this qjit does not read (it reads %u)",
                 (unsigned long)version, ENTRY_VERSION);
        return QJIT_CACHE_CORRUPT;
    }
    if (reserved != 0) {
        snprintf(problem, psize, "damaged (its header's reserved field is not zero)");
        return QJIT_CACHE_CORRUPT;
    }
    uint64_t fixed = (uint64_t)HEADER_BYTES + key_len + meta_len;
    if (payload_len > UINT64_MAX - fixed) {
        snprintf(problem, psize, "damaged (its header gives an impossible payload length)");
        return QJIT_CACHE_CORRUPT;
    }
    uint64_t expected_bytes = fixed + payload_len;
    if (file_bytes < expected_bytes) {
        snprintf(problem, psize, "truncated (%llu of %llu bytes)", (unsigned long long)file_bytes,
                 (unsigned long long)expected_bytes);
        return QJIT_CACHE_CORRUPT;
    }
    if (file_bytes > expected_bytes) {
        snprintf(problem, psize, "too long (%llu bytes where its header says %llu: trailing garbage)",
                 (unsigned long long)file_bytes, (unsigned long long)expected_bytes);
        return QJIT_CACHE_CORRUPT;
    }
    if (payload_len > SIZE_MAX) {
        snprintf(problem, psize, "too large for this machine (%llu-byte payload)",
                 (unsigned long long)payload_len);
        return QJIT_CACHE_CORRUPT;
    }

    key = qjit__alloc(ctx, (size_t)key_len + 1);
    meta = qjit__alloc(ctx, (size_t)meta_len + 1);
    if (keep_payload) {
        payload_alloc = (size_t)payload_len;
        payload = alloc_bytes(ctx, payload_alloc);
    } else if (payload_len) {
        scratch = qjit__alloc(ctx, SCRATCH_BYTES);
    }
    if (!key || !meta || (keep_payload && !payload) || (!keep_payload && payload_len && !scratch)) {
        s = QJIT_OUT_OF_MEMORY;
        goto fail;
    }

    qjit__sha256 sha;
    qjit__sha256_init(&sha);
    int rc = read_hashed(fd, &sha, (uint8_t *)key, key_len, NULL);
    if (rc == 0)
        rc = read_hashed(fd, &sha, (uint8_t *)meta, meta_len, NULL);
    if (rc == 0)
        rc = read_hashed(fd, &sha, payload, payload_len, scratch);
    if (rc < 0) {
        snprintf(problem, psize, "unreadable (%s)", errno_text(errno, eb, sizeof eb));
        s = QJIT_IO;
        goto fail;
    }
    if (rc > 0) {               /* the file shrank under us */
        snprintf(problem, psize, "truncated (shorter than its header says, %llu bytes)",
                 (unsigned long long)expected_bytes);
        goto fail;
    }
    qjit__sha256_final(&sha, digest);
    key[key_len] = '\0';
    meta[meta_len] = '\0';
    if (memcmp(digest, header + 32, 32) != 0) {
        snprintf(problem, psize, "damaged (its SHA-256 checksum does not match its content)");
        goto fail;
    }
    if (memchr(key, '\0', key_len) || memchr(meta, '\0', meta_len)) {
        snprintf(problem, psize, "damaged (a NUL byte inside its key or meta text)");
        goto fail;
    }
    if (expected_key && strcmp(key, expected_key) != 0) {
        snprintf(problem, psize, "for a different key than the one asked for (a renamed file or a "
                 "hash collision)");
        goto fail;
    }
    if (scratch)
        qjit__free(ctx, scratch, SCRATCH_BYTES);
    out->key = key;
    out->meta = meta;
    out->payload = payload;
    out->payload_bytes = keep_payload ? (size_t)payload_len : 0;
    return QJIT_OK;

fail:
    if (key)
        qjit__free(ctx, key, (size_t)key_len + 1);
    if (meta)
        qjit__free(ctx, meta, (size_t)meta_len + 1);
    if (payload)
        free_bytes(ctx, payload, payload_alloc);
    if (scratch)
        qjit__free(ctx, scratch, SCRATCH_BYTES);
    return s;
}

qjit_status qjit__cache_load(qjit_context *ctx, const char *dir, const char *name,
                             const char *expected_key, qjit__cache_entry *out)
{
    char problem[PROBLEM_MAX];
    if (!out)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit__cache_load: out is NULL");
    memset(out, 0, sizeof *out);
    qjit_status s = check_args(ctx, dir, name);
    if (s != QJIT_OK)
        return s;

    int dfd, fd;
    s = dir_open(ctx, dir, &dfd);
    if (s != QJIT_OK)
        return s;
    struct stat st;
    s = file_open(dfd, name, &fd, &st, problem, sizeof problem);
    if (s == QJIT_NOT_FOUND)
        goto close_dir;
    if (s != QJIT_OK) {
        file_open_error(ctx, s, "cache entry", dir, name, problem);
        goto close_dir;
    }
    s = read_entry(ctx, fd, (uint64_t)st.st_size, expected_key, 1, out, problem, sizeof problem);
    if (s == QJIT_CACHE_CORRUPT)
        qjit__error(ctx, s, "cache entry %s/%s is %s; it will be recompiled", dir, name, problem);
    else if (s == QJIT_IO)
        qjit__error(ctx, s, "cannot read cache entry %s/%s: %s", dir, name, problem);
    else if (s == QJIT_OUT_OF_MEMORY)
        qjit__error(ctx, s, "out of memory loading cache entry %s/%s (%lld bytes)", dir, name,
                    (long long)st.st_size);
    close(fd);
close_dir:
    close(dfd);
    return s;
}

void qjit__cache_entry_release(qjit_context *ctx, qjit__cache_entry *e)
{
    if (!e)
        return;
    /* Key and meta hold no NUL (verified on load), so strlen gives their size. */
    if (e->key)
        qjit__free(ctx, e->key, strlen(e->key) + 1);
    if (e->meta)
        qjit__free(ctx, e->meta, strlen(e->meta) + 1);
    if (e->payload)
        free_bytes(ctx, e->payload, e->payload_bytes);
    memset(e, 0, sizeof *e);
}

/*------------------------------------------------------------------------
 * Text files
 *------------------------------------------------------------------------*/

qjit_status qjit__cache_write_text(qjit_context *ctx, const char *dir, const char *name, const char *text)
{
    qjit_status s = check_args(ctx, dir, name);
    if (s != QJIT_OK)
        return s;
    if (!text)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "cache file %s: text is NULL", name);
    piece p = {text, strlen(text)};
    return atomic_write(ctx, dir, name, &p, 1, "cache file", 0);
}

qjit_status qjit__cache_read_text(qjit_context *ctx, const char *dir, const char *name, char **text)
{
    char problem[PROBLEM_MAX], eb[128];
    if (!text)
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "qjit__cache_read_text: text is NULL");
    *text = NULL;
    qjit_status s = check_args(ctx, dir, name);
    if (s != QJIT_OK)
        return s;

    int dfd, fd;
    char *buf = NULL;
    size_t cap = 0;
    s = dir_open(ctx, dir, &dfd);
    if (s != QJIT_OK)
        return s;
    struct stat st;
    s = file_open(dfd, name, &fd, &st, problem, sizeof problem);
    if (s == QJIT_NOT_FOUND)
        goto close_dir;
    if (s != QJIT_OK) {
        file_open_error(ctx, s, "cache file", dir, name, problem);
        goto close_dir;
    }
    if ((uint64_t)st.st_size > TEXT_MAX_BYTES) {
        s = qjit__error(ctx, QJIT_CACHE_CORRUPT, "cache file %s/%s is too large for a qjit text file "
                        "(%lld bytes). Fix: delete it", dir, name, (long long)st.st_size);
        goto close_file;
    }
    cap = (size_t)st.st_size + 1;
    buf = qjit__alloc(ctx, cap);
    if (!buf) {
        s = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory reading cache file %s/%s", dir, name);
        goto close_file;
    }
    ssize_t got = read_full(fd, buf, cap - 1);
    if (got < 0) {
        s = qjit__error(ctx, QJIT_IO, "cannot read cache file %s/%s: %s", dir, name,
                        errno_text(errno, eb, sizeof eb));
        goto free_buf;
    }
    buf[got] = '\0';
    if (memchr(buf, '\0', (size_t)got)) {
        s = qjit__error(ctx, QJIT_CACHE_CORRUPT, "cache file %s/%s is damaged (it holds a NUL byte); "
                        "it will be recreated", dir, name);
        goto free_buf;
    }
    *text = qjit__strdup(ctx, buf);
    if (!*text)
        s = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory reading cache file %s/%s", dir, name);
free_buf:
    qjit__free(ctx, buf, cap);
close_file:
    close(fd);
close_dir:
    close(dfd);
    return s;
}

void qjit__cache_touch(qjit_context *ctx, const char *dir, const char *name)
{
    (void)ctx;
    if (!dir || !dir[0] || !name_ok(name))
        return;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    (void)utimensat(dfd, name, NULL, AT_SYMLINK_NOFOLLOW);
    close(dfd);
}

/*------------------------------------------------------------------------
 * The per-entry lock across processes
 *------------------------------------------------------------------------*/

int qjit__cache_lock(qjit_context *ctx, const char *dir, const char *name)
{
    if (!dir || !dir[0] || !name_ok(name) || strlen(name) + 7 > NAME_MAX_LEN)
        return -1;
    char lock[NAME_MAX_LEN + 8];
    snprintf(lock, sizeof lock, ".%s.lock", name);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, lock, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    close(dfd);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    }
    qjit__log(ctx, "holding the compile lock of %s", name);
    return fd;
}

void qjit__cache_unlock(int fd)
{
    if (fd >= 0)
        close(fd);              /* closing the only descriptor drops the lock */
}

/*------------------------------------------------------------------------
 * Folder walks: list, clear, evict
 *------------------------------------------------------------------------*/

typedef struct dir_item {
    char *name;
    mode_t mode;                 /* from lstat: links are not followed */
    uint64_t bytes;
    struct timespec mtime;
} dir_item;

typedef struct dir_items {
    dir_item *v;
    size_t n, cap;
} dir_items;

static void items_free(qjit_context *ctx, dir_items *it)
{
    for (size_t i = 0; i < it->n; i++)
        qjit__strfree(ctx, it->v[i].name);
    qjit__free(ctx, it->v, it->cap * sizeof *it->v);
    memset(it, 0, sizeof *it);
}

/* Collects the names of dir (open as dfd) that `want` accepts, with their
 * lstat information (directories and links too: planted under one of our
 * names, they must be reported and removable). Entries that vanish while we
 * look are skipped (another process may be evicting). */
static qjit_status collect_items(qjit_context *ctx, const char *dir, int dfd,
                                 int (*want)(const char *), dir_items *it)
{
    char eb[128];
    memset(it, 0, sizeof *it);
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int err = errno;
        close_keep_errno(fd);
        return qjit__error(ctx, QJIT_CACHE, "cannot read cache folder %s: %s", dir,
                           errno_text(err, eb, sizeof eb));
    }
    /* The copy shares its position with dfd, which an earlier walk may have
     * left at the end. */
    rewinddir(d);
    qjit_status s = QJIT_OK;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno != 0)
                s = qjit__error(ctx, QJIT_CACHE, "cannot read cache folder %s: %s", dir,
                                errno_text(errno, eb, sizeof eb));
            break;
        }
        if (!want(de->d_name))
            continue;
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (it->n == it->cap) {
            size_t cap = it->cap ? it->cap * 2 : 32;
            dir_item *v = qjit__realloc(ctx, it->v, it->cap * sizeof *v, cap * sizeof *v);
            if (!v) {
                s = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory listing cache folder %s", dir);
                break;
            }
            it->v = v;
            it->cap = cap;
        }
        dir_item *item = &it->v[it->n];
        item->name = qjit__strdup(ctx, de->d_name);
        if (!item->name) {
            s = qjit__error(ctx, QJIT_OUT_OF_MEMORY, "out of memory listing cache folder %s", dir);
            break;
        }
        item->mode = st.st_mode;
        item->bytes = (uint64_t)st.st_size;
        item->mtime = st.st_mtim;
        it->n++;
    }
    closedir(d);
    if (s != QJIT_OK)
        items_free(ctx, it);
    return s;
}

static int is_entry(const char *name) { return name[0] != '.' && ends_with(name, ".qjb"); }

static int is_sized(const char *name) { return ends_with(name, ".qjb") || ends_with(name, ".qjm"); }

static int is_temp(const char *name) { return name[0] == '.' && strstr(name, ".tmp.") != NULL; }

static int is_lock(const char *name) { return name[0] == '.' && ends_with(name, ".qjb.lock"); }

static int is_qjit_file(const char *name) { return is_sized(name) || is_temp(name) || is_lock(name); }

/* One of the names qjit itself gives files: 64 hex digits and .qjb or .qjm
 * (a directory by such a name can only have been planted). */
static int is_own_name(const char *name)
{
    size_t n = strlen(name);
    if (n != 68 || !is_sized(name))
        return 0;
    for (size_t i = 0; i < 64; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return 0;
    return 1;
}

/* A writer's temporary file (.NAME.tmp.PID.HEX) is stale once its process
 * is gone, or once it is older than any compile takes (so that a reused PID
 * cannot keep it forever); a live writer's is left alone. */
#define TEMP_STALE_SECONDS 600

static int temp_is_stale(const dir_item *item)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (now.tv_sec - item->mtime.tv_sec > TEMP_STALE_SECONDS)
        return 1;
    const char *p = strstr(item->name, ".tmp.");
    char *end = NULL;
    long pid = p ? strtol(p + 5, &end, 10) : 0;
    if (pid <= 0 || !end || *end != '.')
        return 1;               /* not a name this qjit writes: nobody is writing it */
    if (pid == (long)getpid())
        return 0;               /* another thread of this process */
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes the folder name in dfd and everything in it (depth at most 8). */
static int remove_tree(int dfd, const char *name, int depth)
{
    if (depth > 8) {
        errno = ELOOP;
        return -1;
    }
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close_keep_errno(fd);
        return -1;
    }
    int rc = 0;
    for (struct dirent *de; rc == 0 && (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        rc = S_ISDIR(st.st_mode) ? remove_tree(fd, de->d_name, depth + 1) : unlinkat(fd, de->d_name, 0);
    }
    closedir(d);
    return rc == 0 ? unlinkat(dfd, name, AT_REMOVEDIR) : rc;
}

/* Removes a collected item: a file or link, or a folder planted under one
 * of our names. 0, or -1 with errno. */
static int remove_item(int dfd, const dir_item *item)
{
    if (S_ISDIR(item->mode))
        return is_own_name(item->name) ? remove_tree(dfd, item->name, 0) : 0;
    return unlinkat(dfd, item->name, 0);
}

/* Is the compile lock file name (in dfd) held by a process now? */
static int lock_in_use(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return 0;
    int held = flock(fd, LOCK_EX | LOCK_NB) != 0;
    close(fd);
    return held;
}

/* Removes the stale temporary files of dir (open as dfd); best effort. */
static void reap_stale_temps(qjit_context *ctx, const char *dir, int dfd)
{
    dir_items it;
    if (collect_items(ctx, dir, dfd, is_temp, &it) != QJIT_OK)
        return;
    for (size_t i = 0; i < it.n; i++)
        if (!S_ISDIR(it.v[i].mode) && temp_is_stale(&it.v[i]))
            (void)unlinkat(dfd, it.v[i].name, 0);
    items_free(ctx, &it);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const dir_item *)a)->name, ((const dir_item *)b)->name);
}

static int by_age(const void *a, const void *b)
{
    const dir_item *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The value of the line of text starting with `prefix`, cut in place at its
 * newline; "" if there is none. */
static const char *key_line(char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (strncmp(line, prefix, n) == 0) {
            if (nl)
                *nl = '\0';
            return line + n;
        }
        line = nl ? nl + 1 : NULL;
    }
    return "";
}

/* Verifies one entry for the listing; fills info (variant/arch point into
 * e->key, which is cut into lines: *key_bytes keeps its allocated size). */
static qjit_status check_listed(qjit_context *ctx, int dfd, const dir_item *item,
                                qjit__cache_entry *e, size_t *key_bytes, qjit__cache_visit_info *info,
                                char *problem, size_t psize)
{
    int fd;
    struct stat st;
    qjit_status s = file_open(dfd, item->name, &fd, &st, problem, psize);
    if (s != QJIT_OK)
        return s;
    info->bytes = (uint64_t)st.st_size;
    s = read_entry(ctx, fd, (uint64_t)st.st_size, NULL, 0, e, problem, psize);
    close(fd);
    if (s != QJIT_OK)
        return s;
    *key_bytes = strlen(e->key) + 1;
    char expected[80];
    qjit__cache_entry_name(e->key, expected);
    if (strcmp(expected, item->name) != 0) {
        snprintf(problem, psize, "stored under the wrong name (its key belongs in %s)", expected);
        return QJIT_CACHE_CORRUPT;
    }
    /* Cut the lines apart only now: the name check needs the whole key. */
    info->variant = key_line(e->key, "variant ");
    info->arch = key_line(e->key, "arch ");
    /* A tuning record (codegen/record.h): its layer, kind "record". */
    if (!info->variant[0] && (info->variant = key_line(e->key, "record "))[0])
        info->arch = "record";
    return QJIT_OK;
}

qjit_status qjit__cache_list(qjit_context *ctx, const char *dir, qjit__cache_visit_fn visit, void *ud,
                             size_t *bad)
{
    char problem[PROBLEM_MAX];
    if (bad)
        *bad = 0;
    if (!dir || !dir[0])
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "cache folder path is empty or NULL");
    int dfd;
    qjit_status s = dir_open(ctx, dir, &dfd);
    if (s == QJIT_NOT_FOUND)
        return QJIT_OK;         /* no folder yet: an empty cache */
    if (s != QJIT_OK)
        return s;
    dir_items it;
    s = collect_items(ctx, dir, dfd, is_qjit_file, &it);
    if (s != QJIT_OK)
        goto close_dir;
    if (it.n > 1)
        qsort(it.v, it.n, sizeof *it.v, by_name);

    for (size_t i = 0; i < it.n; i++) {
        qjit__cache_entry e;
        memset(&e, 0, sizeof e);
        qjit__cache_visit_info info = {it.v[i].name, "", "", it.v[i].bytes, 0, NULL};
        size_t key_bytes = 0;
        qjit_status es;
        if (is_entry(it.v[i].name)) {
            es = check_listed(ctx, dfd, &it.v[i], &e, &key_bytes, &info, problem, sizeof problem);
        } else if (is_temp(it.v[i].name)) {
            /* A live writer's temporary file is no problem; a dead one's is. */
            if (!temp_is_stale(&it.v[i]))
                continue;
            snprintf(problem, sizeof problem, "a temporary file its writer left when it died (the next compile or "
                     "`qjit cache clear` removes it)");
            es = QJIT_CACHE_CORRUPT;
        } else if (ends_with(it.v[i].name, ".qjm") && it.v[i].name[0] != '.') {
            /* A manifest: listed only when something is wrong with it. */
            int fd;
            struct stat st;
            es = file_open(dfd, it.v[i].name, &fd, &st, problem, sizeof problem);
            if (es == QJIT_OK) {
                close(fd);
                continue;
            }
        } else {
            continue;
        }
        if (es == QJIT_NOT_FOUND)
            continue;           /* removed since the folder was read */
        if (es == QJIT_OUT_OF_MEMORY) {
            s = qjit__error(ctx, es, "out of memory verifying cache entry %s/%s", dir, it.v[i].name);
            break;
        }
        if (es == QJIT_OK) {
            info.valid = 1;
        } else {
            info.variant = "";
            info.arch = "";
            info.problem = problem;
            if (bad)
                (*bad)++;
        }
        int stop = visit ? visit(ud, &info) : 0;
        /* The key was cut into lines: free it with its original size. */
        if (e.key)
            qjit__free(ctx, e.key, key_bytes);
        e.key = NULL;
        qjit__cache_entry_release(ctx, &e);
        if (stop)
            break;
    }
    items_free(ctx, &it);
close_dir:
    close(dfd);
    return s;
}

qjit_status qjit__cache_clear(qjit_context *ctx, const char *dir, size_t *removed)
{
    char eb[128];
    if (removed)
        *removed = 0;
    if (!dir || !dir[0])
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "cache folder path is empty or NULL");
    /* Clearing is allowed in a folder that fails the ownership checks (it is
     * how a user gets rid of a suspicious cache): open it without them. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT)
            return QJIT_OK;
        return qjit__error(ctx, QJIT_CACHE, "cannot open cache folder %s: %s", dir,
                           errno_text(errno, eb, sizeof eb));
    }
    dir_items it;
    qjit_status s = collect_items(ctx, dir, dfd, is_qjit_file, &it);
    if (s != QJIT_OK)
        goto close_dir;
    for (size_t i = 0; i < it.n; i++) {
        /* Another process's write in flight is not ours to break; folders
         * count only when planted under one of our names. */
        if ((is_temp(it.v[i].name) && !temp_is_stale(&it.v[i])) ||
            (S_ISDIR(it.v[i].mode) && !is_own_name(it.v[i].name)) ||
            (is_lock(it.v[i].name) && lock_in_use(dfd, it.v[i].name)))
            continue;
        if (remove_item(dfd, &it.v[i]) == 0) {
            if (removed)
                (*removed)++;
        } else if (errno != ENOENT && s == QJIT_OK) {
            s = qjit__error(ctx, QJIT_CACHE, "cannot remove %s/%s: %s", dir, it.v[i].name,
                            errno_text(errno, eb, sizeof eb));
        }
    }
    items_free(ctx, &it);
close_dir:
    close(dfd);
    return s;
}

qjit_status qjit__cache_evict(qjit_context *ctx, const char *dir, uint64_t max_bytes, size_t *removed)
{
    char eb[128];
    if (removed)
        *removed = 0;
    if (!dir || !dir[0])
        return qjit__error(ctx, QJIT_INVALID_ARGUMENT, "cache folder path is empty or NULL");
    if (max_bytes == 0)
        return QJIT_OK;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT)
            return QJIT_OK;
        return qjit__error(ctx, QJIT_CACHE, "cannot open cache folder %s: %s", dir,
                           errno_text(errno, eb, sizeof eb));
    }
    reap_stale_temps(ctx, dir, dfd);
    dir_items it;
    qjit_status s = collect_items(ctx, dir, dfd, is_sized, &it);
    if (s != QJIT_OK)
        goto close_dir;
    uint64_t total = 0;
    for (size_t i = 0; i < it.n; i++)
        if (S_ISREG(it.v[i].mode))
            total += it.v[i].bytes;
    if (it.n > 1)
        qsort(it.v, it.n, sizeof *it.v, by_age);
    for (size_t i = 0; i < it.n && total > max_bytes; i++) {
        if (!S_ISREG(it.v[i].mode))
            continue;
        if (unlinkat(dfd, it.v[i].name, 0) == 0) {
            total -= it.v[i].bytes;
            if (removed)
                (*removed)++;
        } else if (errno == ENOENT) {
            total -= it.v[i].bytes;     /* another process evicted it */
        } else if (s == QJIT_OK) {
            s = qjit__error(ctx, QJIT_CACHE, "cannot evict %s/%s: %s", dir, it.v[i].name,
                            errno_text(errno, eb, sizeof eb));
        }
    }
    items_free(ctx, &it);
close_dir:
    close(dfd);
    return s;
}
