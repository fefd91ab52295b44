/* driver.c -- loading libcuda with dlopen and binding the device. */
#define _GNU_SOURCE
#include "driver.h"
#include "core.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

qjit_status qjit__cuda_error(qjit_context *ctx, const qjit__driver *d, CUresult r, const char *what)
{
    const char *name = "CUDA_ERROR_UNKNOWN", *text = "unknown error";
    if (d && d->GetErrorName)
        d->GetErrorName(r, &name);
    if (d && d->GetErrorString)
        d->GetErrorString(r, &text);
    return qjit__error(ctx, QJIT_CUDA, "%s failed: %s (%d): %s", what, name ? name : "?", (int)r,
                       text ? text : "?");
}

static qjit_status load_symbols(qjit_context *ctx, qjit__driver *d)
{
#define QJIT__DRIVER_LOAD(member, symbol, params)                                                \
    *(void **)&d->member = dlsym(d->handle, symbol);                                             \
    if (!d->member)                                                                              \
        return qjit__error(ctx, QJIT_NO_DRIVER,                                                  \
                           "the CUDA driver (libcuda.so.1) lacks %s: it is older than qjit "     \
                           "needs; install a driver for CUDA 12 or newer", symbol);
    QJIT__DRIVER_MAP(QJIT__DRIVER_LOAD)
#undef QJIT__DRIVER_LOAD
    return QJIT_OK;
}

qjit_status qjit__driver_init(qjit_context *ctx, qjit__driver *d, int ordinal)
{
    if (d->loaded)
        return QJIT_OK;
    if (!d->handle) {
        d->handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!d->handle)
            return qjit__error(ctx, QJIT_NO_DRIVER,
                               "cannot load the CUDA driver (libcuda.so.1): %s. Running kernels "
                               "needs an NVIDIA GPU and its driver; generation and compilation "
                               "(qjit gen / qjit compile --arch) work without one", dlerror());
    }
    qjit_status st = load_symbols(ctx, d);
    if (st)
        return st;
    CUresult r = d->Init(0);
    if (r == CUDA_ERROR_NO_DEVICE)
        return qjit__error(ctx, QJIT_NO_DEVICE, "the CUDA driver found no GPU (cuInit: "
                           "CUDA_ERROR_NO_DEVICE)");
    if (r != CUDA_SUCCESS)
        return qjit__cuda_error(ctx, d, r, "cuInit");
    int count = 0;
    r = d->DeviceGetCount(&count);
    if (r != CUDA_SUCCESS)
        return qjit__cuda_error(ctx, d, r, "cuDeviceGetCount");
    if (count == 0)
        return qjit__error(ctx, QJIT_NO_DEVICE, "no CUDA device is visible");
    if (ordinal < 0 || ordinal >= count)
        return qjit__error(ctx, QJIT_NO_DEVICE, "device %d requested, but only %d visible "
                           "(devices 0..%d)", ordinal, count, count - 1);
    if ((r = d->DeviceGet(&d->device, ordinal)) != CUDA_SUCCESS)
        return qjit__cuda_error(ctx, d, r, "cuDeviceGet");
    int smem = 0;
    d->DeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->device);
    d->DeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->device);
    d->DeviceGetAttribute(&d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->device);
    d->DeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d->device);
    d->max_smem_optin = (size_t)smem;
    d->DeviceGetAttribute(&d->smem_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, d->device);
    d->DeviceGetAttribute(&d->smem_reserved, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, d->device);
    d->DeviceGetName(d->name, (int)sizeof d->name, d->device);
    d->DriverGetVersion(&d->version);
    if ((r = d->DevicePrimaryCtxRetain(&d->context, d->device)) != CUDA_SUCCESS)
        return qjit__cuda_error(ctx, d, r, "cuDevicePrimaryCtxRetain");
    d->loaded = 1;
    return QJIT_OK;
}

qjit_status qjit__driver_bind(qjit_context *ctx, qjit__driver *d)
{
    CUcontext cur = NULL;
    d->CtxGetCurrent(&cur);
    if (cur == d->context)
        return QJIT_OK;
    CUresult r = d->CtxSetCurrent(d->context);
    return r == CUDA_SUCCESS ? QJIT_OK : qjit__cuda_error(ctx, d, r, "cuCtxSetCurrent");
}

void qjit__driver_release(qjit__driver *d)
{
    if (d->loaded && d->context)
        d->DevicePrimaryCtxRelease(d->device);
    if (d->handle)
        dlclose(d->handle);
    memset(d, 0, sizeof *d);
}
