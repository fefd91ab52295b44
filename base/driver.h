/* driver.h -- the CUDA Driver API, loaded with dlopen("libcuda.so.1") into a
 * table, so a machine without a GPU or driver still generates and compiles.
 * Only cuda.h's types are used; nothing links against libcuda. */
#ifndef QJIT_DRIVER_H
#define QJIT_DRIVER_H

#include <cuda.h>
#include "qjit.h"

/* X(member, symbol, return, params): one row per entry point, symbol being the
 * versioned name libcuda exports (cuda.h's macros map the plain ones). */
#define QJIT__DRIVER_MAP(X)                                                                     \
    X(Init, "cuInit", (unsigned int))                                                          \
    X(DeviceGetCount, "cuDeviceGetCount", (int *))                                             \
    X(DriverGetVersion, "cuDriverGetVersion", (int *))                                         \
    X(DeviceGet, "cuDeviceGet", (CUdevice *, int))                                             \
    X(DeviceGetName, "cuDeviceGetName", (char *, int, CUdevice))                               \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", (int *, CUdevice_attribute, CUdevice))       \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice))             \
    X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))                     \
    X(CtxGetCurrent, "cuCtxGetCurrent", (CUcontext *))                                         \
    X(CtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                                           \
    X(CtxSynchronize, "cuCtxSynchronize", (void))                                              \
    X(ModuleLoadData, "cuModuleLoadData", (CUmodule *, const void *))                          \
    X(ModuleUnload, "cuModuleUnload", (CUmodule))                                              \
    X(ModuleGetFunction, "cuModuleGetFunction", (CUfunction *, CUmodule, const char *))        \
    X(FuncSetAttribute, "cuFuncSetAttribute", (CUfunction, CUfunction_attribute, int))         \
    X(FuncGetAttribute, "cuFuncGetAttribute", (int *, CUfunction_attribute, CUfunction))       \
    X(LaunchKernel, "cuLaunchKernel",                                                          \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,       \
       CUstream, void **, void **))                                                            \
    X(LaunchKernelEx, "cuLaunchKernelEx", (const CUlaunchConfig *, CUfunction, void **, void **)) \
    X(MemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                                      \
    X(MemFree, "cuMemFree_v2", (CUdeviceptr))                                                  \
    X(MemGetInfo, "cuMemGetInfo_v2", (size_t *, size_t *))                                     \
    X(MemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))                      \
    X(MemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))                            \
    X(MemsetD8, "cuMemsetD8_v2", (CUdeviceptr, unsigned char, size_t))                         \
    X(MemsetD8Async, "cuMemsetD8Async", (CUdeviceptr, unsigned char, size_t, CUstream))        \
    X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr, CUdeviceptr, size_t, CUstream))   \
    X(StreamCreate, "cuStreamCreate", (CUstream *, unsigned int))                              \
    X(StreamDestroy, "cuStreamDestroy_v2", (CUstream))                                         \
    X(StreamSynchronize, "cuStreamSynchronize", (CUstream))                                    \
    X(EventCreate, "cuEventCreate", (CUevent *, unsigned int))                                 \
    X(EventDestroy, "cuEventDestroy_v2", (CUevent))                                            \
    X(EventRecord, "cuEventRecord", (CUevent, CUstream))                                       \
    X(EventSynchronize, "cuEventSynchronize", (CUevent))                                       \
    X(EventElapsedTime, "cuEventElapsedTime_v2", (float *, CUevent, CUevent))                  \
    X(TensorMapEncodeTiled, "cuTensorMapEncodeTiled",                                          \
      (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,              \
       const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,       \
       CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill))                    \
    X(StreamIsCapturing, "cuStreamIsCapturing", (CUstream, CUstreamCaptureStatus *))           \
    X(StreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream, CUstreamCaptureMode))          \
    X(StreamEndCapture, "cuStreamEndCapture", (CUstream, CUgraph *))                           \
    X(GraphInstantiate, "cuGraphInstantiateWithFlags", (CUgraphExec *, CUgraph, unsigned long long)) \
    X(GraphLaunch, "cuGraphLaunch", (CUgraphExec, CUstream))                                   \
    X(GraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec))                                   \
    X(GraphDestroy, "cuGraphDestroy", (CUgraph))                                               \
    X(GetErrorString, "cuGetErrorString", (CUresult, const char **))                           \
    X(GetErrorName, "cuGetErrorName", (CUresult, const char **))

typedef struct qjit__driver {
    void *handle;                /* dlopen handle; NULL until loaded */
    int loaded;                  /* 1 after a successful qjit__driver_init */
    CUdevice device;
    CUcontext context;           /* the device's primary context (retained) */
    int cc_major, cc_minor;      /* compute capability */
    int sm_count;
    size_t max_smem_optin;       /* shared memory a block may opt into */
    int smem_per_sm;             /* shared memory of one multiprocessor */
    int smem_reserved;           /* of it, what the system keeps per resident block */
    int version;                 /* cuDriverGetVersion (13000: CUDA 13.0) */
    char name[128];
#define QJIT__DRIVER_MEMBER(member, symbol, params) CUresult (*member) params;
    QJIT__DRIVER_MAP(QJIT__DRIVER_MEMBER)
#undef QJIT__DRIVER_MEMBER
} qjit__driver;

/* Loads libcuda (once), initializes it, retains device `ordinal`'s primary
 * context and reads its properties. Thread-unsafe: call under ctx->lock.
 * @return QJIT_NO_DRIVER, QJIT_NO_DEVICE or QJIT_CUDA with a message. */
qjit_status qjit__driver_init(qjit_context *ctx, qjit__driver *d, int ordinal);
void qjit__driver_release(qjit__driver *d);
/* Makes the primary context current on the calling thread. */
qjit_status qjit__driver_bind(qjit_context *ctx, qjit__driver *d);
/* Formats a failed driver call as an error on ctx: "cuLaunchKernel: CUDA_ERROR_...: text". */
qjit_status qjit__cuda_error(qjit_context *ctx, const qjit__driver *d, CUresult r, const char *what);

#endif
