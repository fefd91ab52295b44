/* libcuda.c -- the qjit command's CUDA Driver API table (libcuda.h): loading
 * libcuda with dlopen and binding the device's primary context. */
#define _GNU_SOURCE
#include "libcuda.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Writes a message into cu->error; returns st. */
static qjit_status say(cli_cuda *cu, qjit_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cu->error, sizeof cu->error, fmt, ap);
    va_end(ap);
    return st;
}

const char *cli_cuda_error(cli_cuda *cu, CUresult r, const char *what)
{
    const char *name = NULL, *text = NULL;
    if (cu->GetErrorName)
        cu->GetErrorName(r, &name);
    if (cu->GetErrorString)
        cu->GetErrorString(r, &text);
    say(cu, QJIT_CUDA, "%s failed: %s (%d): %s", what, name ? name : "CUDA_ERROR_UNKNOWN", (int)r,
        text ? text : "unknown error");
    return cu->error;
}

static qjit_status load_symbols(cli_cuda *cu)
{
#define CLI_CUDA_LOAD(member, symbol, params)                                                     \
    *(void **)&cu->member = dlsym(cu->handle, symbol);                                            \
    if (!cu->member)                                                                              \
        return say(cu, QJIT_NO_DRIVER, "the CUDA driver (libcuda.so.1) lacks %s: it is older "    \
                   "than qjit needs; install a driver for CUDA 12 or newer", symbol);
    CLI_CUDA_MAP(CLI_CUDA_LOAD)
#undef CLI_CUDA_LOAD
#define CLI_CUDA_LOAD_OPTIONAL(member, symbol, params) *(void **)&cu->member = dlsym(cu->handle, symbol);
    CLI_CUDA_OPTIONAL_MAP(CLI_CUDA_LOAD_OPTIONAL)
#undef CLI_CUDA_LOAD_OPTIONAL
    return QJIT_OK;
}

/* Device `ordinal` and what the command prints of it. */
static qjit_status find_device(cli_cuda *cu, int ordinal)
{
    int count = 0;
    CUresult r = cu->DeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
        cli_cuda_error(cu, r, "cuDeviceGetCount");
        return QJIT_CUDA;
    }
    if (count == 0)
        return say(cu, QJIT_NO_DEVICE, "no CUDA device is visible");
    if (ordinal < 0 || ordinal >= count)
        return say(cu, QJIT_NO_DEVICE, "device %d requested, but only %d visible (devices 0..%d)", ordinal,
                   count, count - 1);
    if ((r = cu->DeviceGet(&cu->device, ordinal)) != CUDA_SUCCESS ||
        (r = cu->DeviceGetAttribute(&cu->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu->device)) !=
            CUDA_SUCCESS ||
        (r = cu->DeviceGetAttribute(&cu->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu->device)) !=
            CUDA_SUCCESS ||
        (r = cu->DeviceGetAttribute(&cu->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu->device)) !=
            CUDA_SUCCESS ||
        (r = cu->DeviceGetName(cu->name, (int)sizeof cu->name, cu->device)) != CUDA_SUCCESS) {
        cli_cuda_error(cu, r, "reading the device's properties");
        return QJIT_CUDA;
    }
    return QJIT_OK;
}

qjit_status cli_cuda_open(cli_cuda *cu, int ordinal)
{
    cu->handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu->handle)
        return say(cu, QJIT_NO_DRIVER, "cannot load the CUDA driver (libcuda.so.1): %s. Running kernels needs an "
                   "NVIDIA GPU and its driver; generation and compilation (qjit gen / qjit compile --arch) work "
                   "without one", dlerror());
    qjit_status st = load_symbols(cu);
    if (st)
        return st;
    CUresult r = cu->Init(0);
    if (r == CUDA_ERROR_NO_DEVICE)
        return say(cu, QJIT_NO_DEVICE, "the CUDA driver found no GPU (cuInit: CUDA_ERROR_NO_DEVICE)");
    if (r != CUDA_SUCCESS) {
        cli_cuda_error(cu, r, "cuInit");
        return QJIT_CUDA;
    }
    if ((st = find_device(cu, ordinal)))
        return st;
    CUcontext primary = NULL;
    if ((r = cu->DevicePrimaryCtxRetain(&primary, cu->device)) != CUDA_SUCCESS) {
        cli_cuda_error(cu, r, "cuDevicePrimaryCtxRetain");
        return QJIT_CUDA;
    }
    cu->context = primary;
    return cli_cuda_bind(cu);
}

qjit_status cli_cuda_bind(cli_cuda *cu)
{
    CUresult r = cu->CtxSetCurrent(cu->context);
    if (r == CUDA_SUCCESS)
        return QJIT_OK;
    cli_cuda_error(cu, r, "cuCtxSetCurrent");
    return QJIT_CUDA;
}

void cli_cuda_close(cli_cuda *cu)
{
    if (cu->context)
        cu->DevicePrimaryCtxRelease(cu->device);
    if (cu->handle)
        dlclose(cu->handle);
    memset(cu, 0, sizeof *cu);
}
