/* test_template.c -- the Lua VM and the template engine: syntax, errors with
 * template line numbers, modules, search path, file hashes, sandbox, and the
 * context's allocator (sizes checked, faults injected). */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "context.h"
#include "core.h"
#include "hash.h"
#include "lua_vm.h"

extern const char qjit__engine_lua[];
extern const unsigned long qjit__engine_lua_len;

/*------------------------------------------------------------------------
 * Fixtures: a temporary root (made and removed in Check's parent), a fresh
 * folder per test, and a context whose allocator checks every size.
 *------------------------------------------------------------------------*/

static char *g_root;

static void root_setup(void) { g_root = qt_tempdir("template"); }
static void root_teardown(void)
{
    qt_rmtree(g_root);
    free(g_root);
    g_root = NULL;
}

/* A fresh folder under the root; static storage, one per test process. */
static const char *fresh_dir(void)
{
    static char dir[4096];
    ck_assert_ptr_nonnull(g_root);
    snprintf(dir, sizeof dir, "%s/t-XXXXXX", g_root);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

/* Allocator that prefixes each block with its size, so it can check the old
 * size every caller passes, and that can fail on request. */
typedef struct counting {
    size_t allocs, frees, live, bad_sizes;
    long fail_after; /* growing requests left before failing; < 0: never */
} counting;

static void *count_realloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    counting *c = ud;
    size_t *block = ptr ? (size_t *)ptr - 2 : NULL;
    if (block && block[0] != old_size)
        c->bad_sizes++;
    if (new_size == 0) {
        if (block) {
            c->frees++;
            c->live -= block[0];
            free(block);
        }
        return NULL;
    }
    if (new_size > (ptr ? old_size : 0) && c->fail_after >= 0) {
        if (c->fail_after == 0)
            return NULL;
        c->fail_after--;
    }
    size_t *nb = realloc(block, new_size + 2 * sizeof(size_t));
    if (!nb)
        return NULL;
    if (!block)
        c->allocs++;
    else
        c->live -= nb[0];
    nb[0] = new_size;
    c->live += new_size;
    return nb + 2;
}

static counting g_count;

static qjit_context *make_ctx(counting *c)
{
    qjit_context *ctx = calloc(1, sizeof *ctx);
    ck_assert_ptr_nonnull(ctx);
    pthread_mutex_init(&ctx->error_lock, NULL);
    if (c) {
        memset(c, 0, sizeof *c);
        c->fail_after = -1;
        ctx->host_realloc = count_realloc;
        ctx->host_ud = c;
    }
    return ctx;
}

static void free_ctx(qjit_context *ctx)
{
    pthread_mutex_destroy(&ctx->error_lock);
    free(ctx);
}

/*------------------------------------------------------------------------
 * Helpers
 *------------------------------------------------------------------------*/

/* Writes len bytes to dir/rel, making the folders of rel. */
static void put_bytes(const char *dir, const char *rel, const char *text, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            ck_assert_msg(mkdir(path, 0700) == 0 || errno == EEXIST, "mkdir %s", path);
            *p = '/';
        }
    }
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void put(const char *dir, const char *rel, const char *text)
{
    put_bytes(dir, rel, text, strlen(text));
}

static char *join(const char *dir, const char *rel)
{
    char *p = NULL;
    ck_assert_int_ge(asprintf(&p, "%s/%s", dir, rel), 0);
    return p;
}

/* A VM on search_path with the checking allocator. */
typedef struct fixture {
    qjit_context *ctx;
    qjit__lua *L;
    qjit__lua_result r;
} fixture;

static fixture open_vm(const char *search_path)
{
    fixture f = {make_ctx(&g_count), NULL, {0}};
    qjit_status st = qjit__lua_open(f.ctx, search_path, &f.L);
    ck_assert_msg(st == QJIT_OK, "open: %s", qjit_last_error(f.ctx));
    return f;
}

static void close_vm(fixture *f)
{
    qjit__lua_result_release(f->L, &f->r);
    qjit__lua_close(f->L);
    ck_assert_uint_eq(g_count.bad_sizes, 0);
    ck_assert_uint_eq(g_count.live, 0);
    ck_assert_uint_eq(g_count.allocs, g_count.frees);
    free_ctx(f->ctx);
}

static qjit_status call(fixture *f, const char *module, const char *fn, int nargs,
                        const char *const *args)
{
    qjit__lua_result_release(f->L, &f->r);
    return qjit__lua_call(f->L, module, fn, nargs, args, &f->r);
}

/* Calls fn of module and asserts it returned text; returns the text. */
static const char *call_text(fixture *f, const char *module, const char *fn)
{
    qjit_status st = call(f, module, fn, 0, NULL);
    ck_assert_msg(st == QJIT_OK, "%s:%s -> %s: %s", module, fn, qjit_status_name(st),
                  qjit_last_error(f->ctx));
    ck_assert_ptr_nonnull(f->r.text);
    ck_assert_uint_eq(strlen(f->r.text), f->r.text_len);
    return f->r.text;
}

/* A module "main.lua" whose go() renders t.cu with the Lua table env_src. */
static void put_main(const char *dir, const char *env_src)
{
    char src[1024];
    snprintf(src, sizeof src,
             "local M = {}\n"
             "function M.go() return render(\"t.cu\", %s) end\n"
             "return M\n",
             env_src);
    put(dir, "main.lua", src);
}

/* Renders template text with env; asserts success and exact output. */
static void expect_render(const char *tmpl, const char *env_src, const char *expected)
{
    const char *dir = fresh_dir();
    put(dir, "t.cu", tmpl);
    put_main(dir, env_src);
    fixture f = open_vm(dir);
    ck_assert_str_eq(call_text(&f, "main.lua", "go"), expected);
    close_vm(&f);
}

/* Renders a template expected to fail: asserts status and that the message
 * starts with "<dir>/<file>:<line>:". */
static void expect_error_at(const char *tmpl, const char *file, int line, const char *needle)
{
    const char *dir = fresh_dir();
    put(dir, "t.cu", tmpl);
    put_main(dir, "{}");
    fixture f = open_vm(dir);
    qjit_status st = call(&f, "main.lua", "go", 0, NULL);
    const char *msg = qjit_last_error(f.ctx);
    ck_assert_msg(st == QJIT_TEMPLATE, "status %s: %s", qjit_status_name(st), msg);
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s/%s:%d:", dir, file, line);
    ck_assert_msg(strncmp(msg, prefix, strlen(prefix)) == 0, "expected prefix '%s', got '%s'",
                  prefix, msg);
    if (needle)
        ck_assert_msg(strstr(msg, needle) != NULL, "'%s' not in '%s'", needle, msg);
    ck_assert_ptr_null(f.r.text);
    close_vm(&f);
}

/*------------------------------------------------------------------------
 * Syntax
 *------------------------------------------------------------------------*/

START_TEST(plain_text_passes_through)
{
    const char *cuda =
        "// gemm kernel, 100% plain text\n"
        "#include <cuda_fp16.h>\n"
        "__global__ void k(int *p) {\n"
        "    /* { } %} % { { x } } // not tags */\n"
        "    int a[2] = {1, 2}; if (p) { p[0] = a[0] % 2; }\n"
        "    printf(\"%d\\n\", 5); // 50%\n"
        "\t\ttabs and trailing spaces   \n"
        "\n"
        "    char c = '\\\\'; const char *q = \"\\\"\"; // \\ at the end \\\n"
        "  / /% not code either\n"
        "}\n"
        "// no newline at the end";
    expect_render(cuda, "{}", cuda);
}
END_TEST

START_TEST(interpolation)
{
    expect_render("int n = {{ n }};\n"
                  "float s = {{ scale }}f; // {{ name }}\n"
                  "{{ 1 + 2 }},{{ 2^10 }},{{ 7 / 2 }},{{ 1/3 }},{{ 0.1 }},{{ -8 // 3 }}\n"
                  "{{n}}{{n * 2}}{{ name .. '_' .. n }} {{ flag }} {{ not flag }}\n"
                  "{{ string.format('%04d', n) }} {{ #name }} {{ 1e308 * 10 == math.huge }}\n"
                  "{{ big }} {{ 3.0 }}",
                  "{n = 64, scale = 0.125, name = 'gemm', flag = true, big = 1 << 40}",
                  "int n = 64;\n"
                  "float s = 0.125f; // gemm\n"
                  "3,1024,3.5,0.33333333333333331,0.1,-3\n"
                  "64128gemm_64 true false\n"
                  "0064 4 true\n"
                  "1099511627776 3");
}
END_TEST

START_TEST(loops_and_conditions)
{
    const char *tmpl =
        "__global__ void k(float *acc) {\n"
        "//% for i = 0, N - 1 do\n"
        "    acc[{{ i }}] = 0.f;\n"
        "//% end\n"
        "    //% if BIAS then\n"
        "    acc[0] += bias;\n"
        "  //%else\n"
        "    // no bias\n"
        "//% end\n"
        "//% local names = {'a', 'b'}\n"
        "//% for j, v in ipairs(names) do\n"
        "//%   if j > 1 then\n"
        "    ,\n"
        "//%   end\n"
        "    {{ v }}{{ j }}\n"
        "//% end\n"
        "}\n";
    expect_render(tmpl, "{N = 3, BIAS = false}",
                  "__global__ void k(float *acc) {\n"
                  "    acc[0] = 0.f;\n"
                  "    acc[1] = 0.f;\n"
                  "    acc[2] = 0.f;\n"
                  "    // no bias\n"
                  "    a1\n"
                  "    ,\n"
                  "    b2\n"
                  "}\n");
    expect_render(tmpl, "{N = 1, BIAS = true}",
                  "__global__ void k(float *acc) {\n"
                  "    acc[0] = 0.f;\n"
                  "    acc[0] += bias;\n"
                  "    a1\n"
                  "    ,\n"
                  "    b2\n"
                  "}\n");
}
END_TEST

START_TEST(inline_code)
{
    expect_render("x = {% if neg then %}-{% end %}1;\n"
                  "y = {% if neg then %}a{% else %}b{% end %};\n"
                  "{% for i = 1, 3 do %}[{{ i }}]{% end %}\n"
                  "{% t = 5 %}{{ t }}\n",
                  "{neg = true}",
                  "x = -1;\ny = a;\n[1][2][3]\n5\n");
}
END_TEST

START_TEST(emit_and_indent)
{
    expect_render("{\n"
                  "//% emit('  a\\n', 1, ' ', 2.5, '\\n')\n"
                  "{{ indent('x;\\n\\ny;\\n', 4) }}"
                  "{{ indent('z;', '// ') }}\n"
                  "}\n",
                  "{}",
                  "{\n  a\n1 2.5\n    x;\n\n    y;\n// z;\n}\n");
}
END_TEST

START_TEST(crlf_templates_keep_line_numbers)
{
    expect_render("a\r\n//% local x = 1\r\n{{ x }}\r\n", "{}", "a\r\n1\r\n");
    expect_error_at("a\r\n//% local x = 1\r\n//% local y = nil + x\r\n", "t.cu", 3,
                    "arithmetic");
}
END_TEST

START_TEST(sub_template_with_own_env)
{
    const char *dir = fresh_dir();
    put(dir, "t.cu",
        "//% local body = render('parts/sub.cu', {v = 7, name = 'inner'})\n"
        "begin {{ name }}\n"
        "{{ body }}"
        "{{ render('parts/sub.cu', {v = 8}) }}"
        "end {{ name }} {{ tostring(mine) }}\n");
    put(dir, "parts/sub.cu",
        "//% mine = 'sub-only'\n"
        "  sub v={{ v }} name={{ tostring(name) }} outer={{ tostring(outer) }}\n");
    put_main(dir, "{name = 'outer', outer = 1}");
    fixture f = open_vm(dir);
    ck_assert_str_eq(call_text(&f, "main.lua", "go"),
                     "begin outer\n"
                     "  sub v=7 name=inner outer=nil\n"
                     "  sub v=8 name=nil outer=nil\n"
                     "end outer nil\n");
    close_vm(&f);
}
END_TEST

START_TEST(import_modules_memoized_per_call)
{
    const char *dir = fresh_dir();
    put(dir, "lib/counter.lua", "return {loads = 0}\n");
    put(dir, "lib/mma.lua",
        "local counter = import('lib/counter.lua')\n"
        "counter.loads = counter.loads + 1\n"
        "local M = {}\n"
        "function M.atom(m, n) return string.format('mma_m%dn%d', m, n) end\n"
        "function M.emit_decl(k) emit('  int k = ', k, ';\\n') end\n"
        "return M\n");
    put(dir, "t.cu",
        "//% local mma = import('lib/mma.lua')\n"
        "//% local again = import('lib/mma.lua')\n"
        "{{ mma.atom(16, 8) }} {{ mma == again }}\n"
        "//% mma.emit_decl(32)\n"
        "loads={{ import('lib/counter.lua').loads }}\n");
    put(dir, "main.lua",
        "local mma = import('lib/mma.lua')\n"
        "return {go = function() return render('t.cu', {}) .. mma.atom(1, 2) end}\n");
    fixture f = open_vm(dir);
    const char *expected = "mma_m16n8 true\n  int k = 32;\nloads=1\nmma_m1n2";
    ck_assert_str_eq(call_text(&f, "main.lua", "go"), expected);
    /* A new top-level call starts with an empty memo: loaded once again. */
    ck_assert_str_eq(call_text(&f, "main.lua", "go"), expected);
    close_vm(&f);
}
END_TEST

START_TEST(arguments_and_binary_text)
{
    const char *dir = fresh_dir();
    put(dir, "main.lua",
        "return {\n"
        "  join = function(...) return table.concat({...}, '|') .. select('#', ...) end,\n"
        "  nul = function() return 'a\\0b' end,\n"
        "}\n");
    fixture f = open_vm(dir);
    const char *args[] = {"x", "", "y z"};
    ck_assert_int_eq(call(&f, "main.lua", "join", 3, args), QJIT_OK);
    ck_assert_str_eq(f.r.text, "x||y z3");
    ck_assert_int_eq(call(&f, "main.lua", "nul", 0, NULL), QJIT_OK);
    ck_assert_uint_eq(f.r.text_len, 3);
    ck_assert_int_eq(memcmp(f.r.text, "a\0b", 4), 0);
    close_vm(&f);
}
END_TEST

/*------------------------------------------------------------------------
 * Errors
 *------------------------------------------------------------------------*/

START_TEST(syntax_error_names_template_line)
{
    expect_error_at("line 1\n"
                    "line {{ 2 }}\n"
                    "//% if then\n"
                    "line 4\n",
                    "t.cu", 3, NULL);
    expect_error_at("a\nb\nc\nd {{ 1 + }} e\n", "t.cu", 4, NULL);
    expect_error_at("a\n{{ unclosed\n", "t.cu", 2, "'{{'");
    expect_error_at("a\nb\nc {% if x then\n", "t.cu", 3, "'{%'");
}
END_TEST

START_TEST(runtime_error_names_template_line)
{
    expect_error_at("line 1\n"
                    "//% local x = 1\n"
                    "line 3\n"
                    "//% local y = x + nil\n",
                    "t.cu", 4, "stack traceback:");
    expect_error_at("a\nb\nc\nd\ne = {{ no_such_function() }}\n", "t.cu", 5, "no_such_function");
    expect_error_at("//% error('custom problem')\n", "t.cu", 1, "custom problem");
}
END_TEST

START_TEST(error_in_module_names_module_line)
{
    const char *dir = fresh_dir();
    put(dir, "lib/bad.lua",
        "local M = {}\n"
        "function M.f(x)\n"
        "  return x.field.missing\n"
        "end\n"
        "return M\n");
    put(dir, "t.cu", "a\n{{ import('lib/bad.lua').f({}) }}\n");
    put_main(dir, "{}");
    fixture f = open_vm(dir);
    ck_assert_int_eq(call(&f, "main.lua", "go", 0, NULL), QJIT_TEMPLATE);
    char *prefix = join(dir, "lib/bad.lua:3:");
    const char *msg = qjit_last_error(f.ctx);
    ck_assert_msg(strncmp(msg, prefix, strlen(prefix)) == 0, "got '%s'", msg);
    /* The traceback names the template line that called it (tracebacks may
     * shorten long paths, so only the end is compared). */
    ck_assert_msg(strstr(msg, "/t.cu:2:") != NULL, "caller not in '%s'", msg);
    free(prefix);
    close_vm(&f);
}
END_TEST

START_TEST(nil_interpolation_names_line_and_expression)
{
    expect_error_at("a\nvalue = {{ missing_var }};\n", "t.cu", 2, "{{ missing_var }} is nil");
    expect_error_at("//% emit(nil)\n", "t.cu", 1, "is nil");
    expect_error_at("x\n{{ {} }}\n", "t.cu", 2, "is a table");
}
END_TEST

START_TEST(long_paths_are_not_shortened)
{
    /* Lua shortens chunk names over LUA_IDSIZE; messages must not. */
    const char *dir = fresh_dir();
    const char *deep = "a-rather-long-folder-name/another-long-folder-name/and-one-more-level";
    char rel[512];
    snprintf(rel, sizeof rel, "%s/long-template-name.cu", deep);
    put(dir, rel, "ok\n//% local x = nil .. 'y'\n");
    char src[1024];
    snprintf(src, sizeof src, "return {go = function() return render('%s') end}\n", rel);
    put(dir, "main.lua", src);
    fixture f = open_vm(dir);
    ck_assert_int_eq(call(&f, "main.lua", "go", 0, NULL), QJIT_TEMPLATE);
    char *path = join(dir, rel);
    ck_assert_int_gt(strlen(path), 60);
    char prefix[1200];
    snprintf(prefix, sizeof prefix, "%s:2:", path);
    const char *msg = qjit_last_error(f.ctx);
    ck_assert_msg(strncmp(msg, prefix, strlen(prefix)) == 0, "got '%s'", msg);
    free(path);
    close_vm(&f);
}
END_TEST

START_TEST(fail_carries_status)
{
    const char *dir = fresh_dir();
    put(dir, "t.cu", "a\n//% fail('INVALID_KEY', \"unknown field 'x'\")\n");
    put(dir, "arch.lua",
        "return {\n"
        "  go = function() fail('QJIT_UNSUPPORTED_ARCH', 'sm_70 lacks mma.m16n8k16') end,\n"
        "  bogus = function() fail('NO_SUCH_STATUS', 'x') end,\n"
        "  ok = function() fail('OK', 'x') end,\n"
        "  caught = function()\n"
        "    local ok, e = pcall(fail, 'CACHE', 'c')\n"
        "    return tostring(ok) .. ' ' .. tostring(e)\n"
        "  end,\n"
        "}\n");
    put_main(dir, "{}");
    fixture f = open_vm(dir);
    ck_assert_int_eq(call(&f, "main.lua", "go", 0, NULL), QJIT_INVALID_KEY);
    ck_assert_str_eq(qjit_last_error(f.ctx), "unknown field 'x'");
    ck_assert_int_eq(call(&f, "arch.lua", "go", 0, NULL), QJIT_UNSUPPORTED_ARCH);
    ck_assert_str_eq(qjit_last_error(f.ctx), "sm_70 lacks mma.m16n8k16");
    ck_assert_int_eq(call(&f, "arch.lua", "bogus", 0, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "unknown status NO_SUCH_STATUS"));
    ck_assert_int_eq(call(&f, "arch.lua", "ok", 0, NULL), QJIT_TEMPLATE);
    ck_assert_str_eq(call_text(&f, "arch.lua", "caught"), "false c");
    close_vm(&f);
}
END_TEST

START_TEST(pcall_in_template_restores_output)
{
    const char *dir = fresh_dir();
    put(dir, "bad.cu", "partial output\n//% error('stop here')\n");
    put(dir, "t.cu",
        "a\n"
        "//% local ok = pcall(render, 'missing.cu')\n"
        "ok={{ ok }}\n"
        "//% local ok2, e = pcall(render, 'bad.cu')\n"
        "//% emit('after ')\n"
        "ok2={{ ok2 }} {{ e:match('stop here') }}\n"
        "//% local ok3 = pcall(function() emit('x'); error('stop') end)\n"
        "ok3={{ ok3 }}\n");
    put_main(dir, "{}");
    fixture f = open_vm(dir);
    ck_assert_str_eq(call_text(&f, "main.lua", "go"),
                     "a\nok=false\nafter ok2=false stop here\nxok3=false\n");
    close_vm(&f);
}
END_TEST

START_TEST(missing_file_names_name_and_path)
{
    const char *dir = fresh_dir();
    put(dir, "t.cu", "{{ render('nope/missing.cu') }}\n");
    put(dir, "tail.lua", "return {go = function() return render('gone.cu') end}\n");
    put_main(dir, "{}");
    fixture f = open_vm(dir);
    ck_assert_int_eq(call(&f, "main.lua", "go", 0, NULL), QJIT_TEMPLATE);
    const char *msg = qjit_last_error(f.ctx);
    ck_assert_msg(strstr(msg, "'nope/missing.cu'") && strstr(msg, dir), "got '%s'", msg);
    char *prefix = join(dir, "t.cu:1:");
    ck_assert_msg(strncmp(msg, prefix, strlen(prefix)) == 0, "got '%s'", msg);
    free(prefix);
    ck_assert_int_eq(call(&f, "absent.lua", "go", 0, NULL), QJIT_TEMPLATE);
    msg = qjit_last_error(f.ctx);
    ck_assert_msg(strstr(msg, "'absent.lua'") && strstr(msg, dir), "got '%s'", msg);
    /* A tail call leaves no caller line: the message names no engine line. */
    ck_assert_int_eq(call(&f, "tail.lua", "go", 0, NULL), QJIT_TEMPLATE);
    msg = qjit_last_error(f.ctx);
    ck_assert_msg(strncmp(msg, "template file 'gone.cu' not found", 33) == 0, "got '%s'", msg);
    ck_assert_int_eq(call(&f, "main.lua", "no_such_fn", 0, NULL), QJIT_TEMPLATE);
    ck_assert_str_eq(qjit_last_error(f.ctx), "module main.lua has no function no_such_fn");
    close_vm(&f);
}
END_TEST

/*------------------------------------------------------------------------
 * Files
 *------------------------------------------------------------------------*/

START_TEST(unsafe_names_refused)
{
    const char *dir = fresh_dir();
    put(dir, "t.cu", "x\n");
    char *inner = join(dir, "inner");
    ck_assert_int_eq(mkdir(inner, 0700), 0);
    put(dir, "main.lua",
        "return {\n"
        "  up = function() return render('../t.cu') end,\n"
        "  mid = function() return render('lib/../t.cu') end,\n"
        "  abs = function() return import('/etc/passwd') end,\n"
        "  dots = function() return render('..t.cu') end,\n"
        "}\n");
    fixture f = open_vm(inner);
    /* inner holds nothing: the top-level module itself is "../main.lua". */
    ck_assert_int_eq(call(&f, "../main.lua", "up", 0, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "'..'"));
    qjit__lua_close(f.L);
    f.L = NULL;
    qjit__lua_close(NULL);
    ck_assert_int_eq(qjit__lua_open(f.ctx, dir, &f.L), QJIT_OK);
    ck_assert_int_eq(call(&f, "main.lua", "up", 0, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "'..'"));
    ck_assert_int_eq(call(&f, "main.lua", "mid", 0, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "'..'"));
    ck_assert_int_eq(call(&f, "main.lua", "abs", 0, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "absolute"));
    ck_assert_int_eq(call(&f, "main.lua", "dots", 0, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "not found"));

    char *path = NULL;
    ck_assert_int_eq(qjit__template_resolve(f.ctx, inner, "../t.cu", &path), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__template_resolve(f.ctx, inner, "a/../../t.cu", &path),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__template_resolve(f.ctx, dir, "/etc/passwd", &path),
                     QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__template_resolve(f.ctx, dir, "", &path), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__template_resolve(f.ctx, dir, "inner", &path), QJIT_NOT_FOUND);
    ck_assert_ptr_null(path);
    free(inner);
    close_vm(&f);
}
END_TEST

START_TEST(search_path_order)
{
    const char *dir = fresh_dir();
    put(dir, "user/t.cu", "user copy\n");
    put(dir, "builtin/t.cu", "builtin copy\n");
    put(dir, "builtin/only.cu", "only builtin\n");
    put(dir, "builtin/main.lua",
        "return {go = function() return render('t.cu') .. render('only.cu') end}\n");
    char sp[4096];
    /* Empty entries and trailing slashes are harmless. */
    snprintf(sp, sizeof sp, "%s/missing::%s/user/:%s/builtin", dir, dir, dir);
    fixture f = open_vm(sp);
    ck_assert_str_eq(call_text(&f, "main.lua", "go"), "user copy\nonly builtin\n");
    ck_assert_uint_eq(f.r.nfiles, 3);
    char *want_main = join(dir, "builtin/main.lua"), *want_t = join(dir, "user/t.cu"),
         *want_only = join(dir, "builtin/only.cu");
    ck_assert_str_eq(f.r.files[0].path, want_main);
    ck_assert_str_eq(f.r.files[1].path, want_t);
    ck_assert_str_eq(f.r.files[2].path, want_only);

    char *path = NULL;
    ck_assert_int_eq(qjit__template_resolve(f.ctx, sp, "t.cu", &path), QJIT_OK);
    ck_assert_str_eq(path, want_t);
    qjit__strfree(f.ctx, path);
    ck_assert_int_eq(qjit__template_resolve(f.ctx, sp, "only.cu", &path), QJIT_OK);
    ck_assert_str_eq(path, want_only);
    qjit__strfree(f.ctx, path);
    ck_assert_int_eq(qjit__template_resolve(f.ctx, sp, "none.cu", &path), QJIT_NOT_FOUND);
    ck_assert_ptr_null(path);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "none.cu"));
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), sp));
    free(want_main);
    free(want_t);
    free(want_only);
    close_vm(&f);
}
END_TEST

static void check_file(const qjit__lua_file *file, const char *dir, const char *name,
                       const char *content)
{
    ck_assert_str_eq(file->name, name);
    char *path = join(dir, name);
    ck_assert_str_eq(file->path, path);
    char hex[65], from_file[65];
    qjit__sha256_hex(content, strlen(content), hex);
    ck_assert_str_eq(file->hash, hex);
    ck_assert_int_eq(qjit__file_sha256(NULL, path, from_file), QJIT_OK);
    ck_assert_str_eq(from_file, hex);
    free(path);
}

START_TEST(files_recorded_once_with_hashes)
{
    const char *dir = fresh_dir();
    const char *main_src =
        "local a = import('lib/a.lua')\n"
        "return {go = function() return render('t.cu') .. render('t.cu') .. a.x end}\n";
    const char *a_src = "import('lib/b.lua'); return {x = 'A'}\n";
    const char *b_src = "return import('lib/a.lua') and 1\n";
    const char *t_src = "{{ import('lib/b.lua') }}{{ render('sub.cu') }}\n";
    const char *sub_src = "//% import('lib/a.lua')\nsub\n";
    put(dir, "main.lua", main_src);
    put(dir, "lib/a.lua", a_src);
    put(dir, "lib/b.lua", "return 1\n");
    put(dir, "t.cu", t_src);
    put(dir, "sub.cu", sub_src);
    fixture f = open_vm(dir);
    ck_assert_str_eq(call_text(&f, "main.lua", "go"), "1sub\n\n1sub\n\nA");
    ck_assert_uint_eq(f.r.nfiles, 5);
    check_file(&f.r.files[0], dir, "main.lua", main_src);
    check_file(&f.r.files[1], dir, "lib/a.lua", a_src);
    check_file(&f.r.files[2], dir, "lib/b.lua", "return 1\n");
    check_file(&f.r.files[3], dir, "t.cu", t_src);
    check_file(&f.r.files[4], dir, "sub.cu", sub_src);

    /* A circular import is an error, not a hang. */
    put(dir, "lib/b.lua", b_src);
    ck_assert_int_eq(call(&f, "main.lua", "go", 0, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "circular"));
    close_vm(&f);
}
END_TEST

START_TEST(edited_file_seen_by_next_call)
{
    const char *dir = fresh_dir();
    put(dir, "t.cu", "version {{ 1 }}\n");
    put_main(dir, "{}");
    fixture f = open_vm(dir);
    ck_assert_str_eq(call_text(&f, "main.lua", "go"), "version 1\n");
    ck_assert_uint_eq(f.r.nfiles, 2);
    char first[65];
    memcpy(first, f.r.files[1].hash, sizeof first);
    ck_assert_str_eq(f.r.files[1].name, "t.cu");

    put(dir, "t.cu", "version {{ 2 }}\n");
    ck_assert_str_eq(call_text(&f, "main.lua", "go"), "version 2\n");
    ck_assert_str_eq(f.r.files[1].name, "t.cu");
    ck_assert_str_ne(f.r.files[1].hash, first);
    char hex[65];
    qjit__sha256_hex("version {{ 2 }}\n", 16, hex);
    ck_assert_str_eq(f.r.files[1].hash, hex);
    close_vm(&f);
}
END_TEST

START_TEST(file_sha256)
{
    const char *dir = fresh_dir();
    /* Binary content, larger than one read chunk. */
    size_t n = 100000;
    char *data = malloc(n);
    qt_rng rng = qt_rng_make(7);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)(qt_next(&rng) & 0xff);
    put_bytes(dir, "blob.bin", data, n);
    char *path = join(dir, "blob.bin");
    char want[65], got[65];
    qjit__sha256_hex(data, n, want);
    ck_assert_int_eq(qjit__file_sha256(NULL, path, got), QJIT_OK);
    ck_assert_str_eq(got, want);
    char *missing = join(dir, "none");
    ck_assert_int_eq(qjit__file_sha256(NULL, missing, got), QJIT_NOT_FOUND);
    free(missing);
    free(path);
    free(data);
}
END_TEST

/*------------------------------------------------------------------------
 * Results, sandbox, engine
 *------------------------------------------------------------------------*/

/* A typed reader: fields read with their types and ranges, nested records
 * and arrays, optional fields; every mismatch names the table and field. */
typedef struct typed {
    long long big, neg, f3, dflt;
    char alpha[8];
    const char *empty;
    long long elems[4];
    int nelems, has_no, has_zeta;
    int mode;                    /* which failure to provoke (0: none) */
} typed;

static qjit_status read_typed(qjit__rec *r, void *ud)
{
    typed *x = ud;
    qjit__rec list, e;
    qjit_status st;
    switch (x->mode) {
    case 1: return qjit__rec_int(r, "alpha", 0, 10, &x->big);            /* a string, not an integer */
    case 2: return qjit__rec_int(r, "mid", 0, 10, &x->big);              /* 2.5 */
    case 3: return qjit__rec_int(r, "big", 0, 1000, &x->big);            /* out of range */
    case 4: return qjit__rec_str(r, "absent", &x->empty, NULL);          /* missing */
    case 5: return qjit__rec_strcpy(r, "long", x->alpha, sizeof x->alpha);
    case 6: return qjit__rec_table(r, "alpha", &list);                   /* not a table */
    case 7: return qjit__rec_fail(r, "a reason %d", 42);
    case 8: return qjit__rec_str(r, "nul", &x->empty, NULL);
    default: break;
    }
    if ((st = qjit__rec_int(r, "big", 0, 1LL << 50, &x->big)) || (st = qjit__rec_int(r, "neg", -10, 0, &x->neg)) ||
        (st = qjit__rec_int(r, "f3", 0, 5, &x->f3)) || (st = qjit__rec_int_or(r, "absent", 0, 9, 7, &x->dflt)) ||
        (st = qjit__rec_strcpy(r, "alpha", x->alpha, sizeof x->alpha)) || (st = qjit__rec_str(r, "e", &x->empty, NULL)))
        return st;
    x->has_no = qjit__rec_has(r, "no");
    x->has_zeta = qjit__rec_has(r, "zeta");
    if ((st = qjit__rec_table(r, "list", &list)))
        return st;
    x->nelems = (int)qjit__rec_len(&list);
    for (int i = 1; i <= x->nelems && i <= 4 && !st; i++) {
        if (!(st = qjit__rec_elem(&list, i, &e))) {
            st = qjit__rec_int(&e, "v", 0, 100, &x->elems[i - 1]);
            qjit__rec_close(&e);
        }
    }
    qjit__rec_close(&list);
    return st;
}

static qjit_status read_w(qjit__rec *r, void *ud)
{
    typed *x = ud;
    const char *s;
    qjit_status st = qjit__rec_int(r, "i", 0, 100, &x->big);
    if (st || (st = qjit__rec_strcpy(r, "t", x->alpha, sizeof x->alpha)) || (st = qjit__rec_str(r, "s", &s, NULL)))
        return st;
    return strcmp(s, "txt") ? qjit__rec_fail(r, "s = %s", s) : QJIT_OK;
}

START_TEST(typed_results)
{
    const char *dir = fresh_dir();
    put(dir, "v.lua",
        "return {\n"
        "  info = function() return {alpha = 'x', mid = 2.5, flag = true, big = 1 << 40, f3 = 3.0, neg = -7,\n"
        "                            no = false, e = '', long = 'abcdefghij', nul = 'a\\0b',\n"
        "                            list = {{v = 1}, {v = 2}, {v = 3}}} end,\n"
        "  text = function() return 'plain' end,\n"
        "  number = function() return 5 end,\n"
        "}\n");
    fixture f = open_vm(dir);
    typed x;
    memset(&x, 0, sizeof x);
    qjit_status st = qjit__lua_invoke(f.L, "v.lua", "info", NULL, 0, read_typed, &x, NULL);
    ck_assert_msg(st == QJIT_OK, "%s", qjit_last_error(f.ctx));
    ck_assert_int_eq(x.big, 1LL << 40);
    ck_assert_int_eq(x.neg, -7);
    ck_assert_int_eq(x.f3, 3);                 /* an integral float is an integer */
    ck_assert_int_eq(x.dflt, 7);
    ck_assert_str_eq(x.alpha, "x");
    ck_assert_int_eq(x.has_no, 1);             /* false is present */
    ck_assert_int_eq(x.has_zeta, 0);
    ck_assert_int_eq(x.nelems, 3);
    ck_assert_int_eq(x.elems[0] + 10 * x.elems[1] + 100 * x.elems[2], 321);
    static const struct { const char *words; } fails[] = {
        {""}, {"field 'alpha' is a string, not an integer"}, {"field 'mid' is a number, not an integer"},
        {"field 'big' = 1099511627776 is outside [0, 1000]"}, {"field 'absent' is a nil, not a string"},
        {"field 'long' is 10 bytes long; at most 7 fit"}, {"field 'alpha' is a string, not a table"},
        {"a reason 42"}, {"field 'nul' holds a NUL byte"},
    };
    for (int mode = 1; mode < (int)(sizeof fails / sizeof fails[0]); mode++) {
        x.mode = mode;
        ck_assert_int_eq(qjit__lua_invoke(f.L, "v.lua", "info", NULL, 0, read_typed, &x, NULL), QJIT_TEMPLATE);
        ck_assert_msg(strstr(qjit_last_error(f.ctx), fails[mode].words) != NULL, "mode %d: '%s' lacks '%s'", mode,
                      qjit_last_error(f.ctx), fails[mode].words);
        ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "v.lua info()"));
    }
    /* A typed call wants a table, a text call a string. */
    x.mode = 0;
    ck_assert_int_eq(qjit__lua_invoke(f.L, "v.lua", "text", NULL, 0, read_typed, &x, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "expected a table"));
    ck_assert_int_eq(call(&f, "v.lua", "info", 0, NULL), QJIT_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(qjit_last_error(f.ctx), "expected a string"));
    ck_assert_int_eq(call(&f, "v.lua", "number", 0, NULL), QJIT_TEMPLATE);
    /* Typed arguments arrive as Lua integers and strings. */
    put(dir, "w.lua", "return {f = function(s, i) return {t = math.type(i), s = s, i = i + 1} end}\n");
    const qjit__lua_arg args[2] = {QJIT__ARG_STR("txt"), QJIT__ARG_INT(41)};
    x.mode = 0;
    ck_assert_int_eq(qjit__lua_invoke(f.L, "w.lua", "f", args, 2, read_w, &x, NULL), QJIT_OK);
    ck_assert_int_eq(x.big, 42);
    ck_assert_str_eq(x.alpha, "integer");
    close_vm(&f);
}
END_TEST

START_TEST(sandbox)
{
    const char *probe =
        "{{ type(io) }} {{ type(os) }} {{ type(require) }} {{ type(package) }} "
        "{{ type(debug) }} {{ type(load) }} {{ type(loadfile) }} {{ type(dofile) }} "
        "{{ type(print) }} {{ type(collectgarbage) }} {{ type(_G) }} {{ type(coroutine) }} "
        "{{ type(string.dump) }} {{ type(math.random) }} {{ type(getmetatable('')) }}\n";
    const char *nils = "nil nil nil nil nil nil nil nil nil nil nil nil nil nil string\n";
    expect_render(probe, "{}", nils);
    const char *dir = fresh_dir();
    char mod[2048];
    snprintf(mod, sizeof mod,
             "local probe = [==[%s]==]\n"
             "return {\n"
             "  probe = function() return render('p.cu') end,\n"
             "  direct = function() return type(io) .. type(os) .. type(require) end,\n"
             "  open = function() return io.open('/etc/passwd') end,\n"
             "  exec = function() return os.execute('true') end,\n"
             "  -- templates cannot change the library of later calls\n"
             "  poison = function() string.upper = nil; table.concat = nil; return 'x' end,\n"
             "  after = function() return ('a'):upper() .. string.upper('b') end,\n"
             "}\n",
             probe);
    put(dir, "m.lua", mod);
    put(dir, "p.cu", probe);
    fixture f = open_vm(dir);
    ck_assert_str_eq(call_text(&f, "m.lua", "probe"), nils);
    ck_assert_str_eq(call_text(&f, "m.lua", "direct"), "nilnilnil");
    ck_assert_int_eq(call(&f, "m.lua", "open", 0, NULL), QJIT_TEMPLATE);
    ck_assert_int_eq(call(&f, "m.lua", "exec", 0, NULL), QJIT_TEMPLATE);
    ck_assert_str_eq(call_text(&f, "m.lua", "poison"), "x");
    ck_assert_str_eq(call_text(&f, "m.lua", "after"), "AB");
    close_vm(&f);
}
END_TEST

START_TEST(engine_hash)
{
    fixture f = open_vm("");
    char want[65];
    qjit__sha256_hex(qjit__engine_lua, qjit__engine_lua_len, want);
    ck_assert_str_eq(qjit__lua_engine_hash(f.L), want);
    ck_assert_uint_eq(strlen(want), 64);
    /* An empty search path finds nothing. */
    ck_assert_int_eq(call(&f, "main.lua", "go", 0, NULL), QJIT_TEMPLATE);
    close_vm(&f);
}
END_TEST

START_TEST(bad_arguments)
{
    fixture f = open_vm("");
    ck_assert_int_eq(qjit__lua_open(f.ctx, "", NULL), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__lua_call(f.L, NULL, "go", 0, NULL, &f.r), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__lua_call(f.L, "m.lua", NULL, 0, NULL, &f.r), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__lua_call(f.L, "m.lua", "go", 1, NULL, &f.r), QJIT_INVALID_ARGUMENT);
    ck_assert_int_eq(qjit__lua_call(NULL, "m.lua", "go", 0, NULL, &f.r), QJIT_INVALID_ARGUMENT);
    qjit__lua_result_release(f.L, NULL);
    close_vm(&f);
}
END_TEST

/*------------------------------------------------------------------------
 * Allocator
 *------------------------------------------------------------------------*/

static void put_alloc_fixture(const char *dir)
{
    put(dir, "lib/util.lua", "return {twice = function(x) return 2 * x end}\n");
    put(dir, "t.cu",
        "//% local u = import('lib/util.lua')\n"
        "//% for i = 1, 20 do\n"
        "acc[{{ i }}] = {{ u.twice(i) }};\n"
        "//% end\n");
    put(dir, "main.lua",
        "return {go = function() return render('t.cu') end,\n"
        "        info = function(a) return {a = a, n = 1} end}\n");
}

START_TEST(vm_uses_context_allocator)
{
    const char *dir = fresh_dir();
    put_alloc_fixture(dir);
    counting c;
    qjit_context *ctx = make_ctx(&c);
    qjit__lua *L = NULL;
    ck_assert_int_eq(qjit__lua_open(ctx, dir, &L), QJIT_OK);
    size_t after_open = c.allocs;
    ck_assert_uint_gt(after_open, 100); /* the whole VM, not only our structs */
    qjit__lua_result r;
    ck_assert_int_eq(qjit__lua_call(L, "main.lua", "go", 0, NULL, &r), QJIT_OK);
    ck_assert_uint_gt(c.allocs, after_open);
    ck_assert_ptr_nonnull(strstr(r.text, "acc[20] = 40;\n"));
    qjit__lua_result_release(L, &r);
    qjit__lua_close(L);
    ck_assert_uint_eq(c.bad_sizes, 0);
    ck_assert_uint_eq(c.live, 0);
    ck_assert_uint_eq(c.allocs, c.frees);
    free_ctx(ctx);
}
END_TEST

static qjit_status read_a(qjit__rec *r, void *ud) { return qjit__rec_strcpy(r, "a", ud, 8); }

/* Every growing allocation fails in turn: each failure is reported (never a
 * crash or abort), and nothing leaks. */
START_TEST(allocation_failures_reported)
{
    const char *dir = fresh_dir();
    put_alloc_fixture(dir);
    counting c;
    qjit_context *ctx = make_ctx(&c);
    const qjit__lua_arg args[] = {QJIT__ARG_STR("v")};
    int done = 0, oom_seen = 0;
    for (long n = 0; n < 200000 && !done; n += 1 + n / 64) {
        memset(&c, 0, sizeof c);
        c.fail_after = n;
        qjit__lua *L = NULL;
        qjit__lua_result r = {0};
        qjit_status st = qjit__lua_open(ctx, dir, &L);
        if (st == QJIT_OK) {
            st = qjit__lua_call(L, "main.lua", "go", 0, NULL, &r);
            if (st == QJIT_OK) {
                ck_assert_ptr_nonnull(strstr(r.text, "acc[20] = 40;\n"));
                qjit__lua_result_release(L, &r);
                char a[8] = "";
                st = qjit__lua_invoke(L, "main.lua", "info", args, 1, read_a, a, NULL);
                if (st == QJIT_OK) {
                    ck_assert_str_eq(a, "v");
                    done = 1;
                }
            }
            qjit__lua_result_release(L, &r);
        } else {
            ck_assert_ptr_null(L);
        }
        if (st != QJIT_OK) {
            ck_assert_msg(st == QJIT_OUT_OF_MEMORY || st == QJIT_TEMPLATE, "n=%ld: %s: %s", n,
                          qjit_status_name(st), qjit_last_error(ctx));
            oom_seen |= st == QJIT_OUT_OF_MEMORY;
        }
        qjit__lua_close(L);
        ck_assert_msg(c.live == 0 && c.allocs == c.frees && c.bad_sizes == 0,
                      "n=%ld: live %zu, allocs %zu, frees %zu, bad sizes %zu", n, c.live,
                      c.allocs, c.frees, c.bad_sizes);
    }
    ck_assert(done);
    ck_assert(oom_seen);
    free_ctx(ctx);
}
END_TEST

Suite *qjit_test_suite(void)
{
    Suite *s = suite_create("template");
    struct {
        const char *name;
        const TTest *test;
    } tests[] = {
        {"plain_text", plain_text_passes_through},
        {"interpolation", interpolation},
        {"loops", loops_and_conditions},
        {"inline", inline_code},
        {"emit_indent", emit_and_indent},
        {"crlf", crlf_templates_keep_line_numbers},
        {"sub_template", sub_template_with_own_env},
        {"import", import_modules_memoized_per_call},
        {"arguments", arguments_and_binary_text},
        {"syntax_error", syntax_error_names_template_line},
        {"runtime_error", runtime_error_names_template_line},
        {"module_error", error_in_module_names_module_line},
        {"nil_value", nil_interpolation_names_line_and_expression},
        {"long_paths", long_paths_are_not_shortened},
        {"fail", fail_carries_status},
        {"pcall", pcall_in_template_restores_output},
        {"missing", missing_file_names_name_and_path},
        {"unsafe_names", unsafe_names_refused},
        {"search_path", search_path_order},
        {"files", files_recorded_once_with_hashes},
        {"edit", edited_file_seen_by_next_call},
        {"file_sha256", file_sha256},
        {"table_results", typed_results},
        {"sandbox", sandbox},
        {"engine_hash", engine_hash},
        {"bad_arguments", bad_arguments},
        {"allocator", vm_uses_context_allocator},
        {"allocation_failures", allocation_failures_reported},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_add_unchecked_fixture(tc, root_setup, root_teardown);
        tcase_add_test(tc, tests[i].test);
        qt_add(s, tc, 0);
    }
    return s;
}
