/* libcuda.h -- the CUDA Driver API as the qjit command uses it: libcuda
 * loaded with dlopen("libcuda.so.1") into the command's own table (libqjit's
 * is internal to the library), bound to the primary context of the device
 * qjit's contexts run on, so that the device memory, streams and events the
 * command makes are those its qjit calls take. Only cuda.h's types are used;
 * nothing links against libcuda, and without a GPU cli_cuda_open says why.
 * (Not named cuda.h: cli/ is on the include path, where it would hide the
 * toolkit's.)
 *
 * Thread safety: a cli_cuda is used by one thread, the one that opened it. */
#ifndef QJIT_CLI_LIBCUDA_H
#define QJIT_CLI_LIBCUDA_H

#include <cuda.h>
#include "qjit.h"

/* X(member, symbol, params): one row per entry point, symbol being the
 * versioned name libcuda exports (cuda.h's macros map the plain ones). The
 * command does not start without these. */
#define CLI_CUDA_MAP(X)                                                                             \
    X(Init, "cuInit", (unsigned int))                                                              \
    X(DeviceGetCount, "cuDeviceGetCount", (int *))                                                 \
    X(DeviceGet, "cuDeviceGet", (CUdevice *, int))                                                 \
    X(DeviceGetName, "cuDeviceGetName", (char *, int, CUdevice))                                   \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", (int *, CUdevice_attribute, CUdevice))           \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice))                 \
    X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))                         \
    X(CtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                                               \
    X(CtxSynchronize, "cuCtxSynchronize", (void))                                                  \
    X(MemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                                          \
    X(MemFree, "cuMemFree_v2", (CUdeviceptr))                                                      \
    X(MemGetInfo, "cuMemGetInfo_v2", (size_t *, size_t *))                                         \
    X(MemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))                          \
    X(MemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))                                \
    X(MemsetD8, "cuMemsetD8_v2", (CUdeviceptr, unsigned char, size_t))                             \
    X(MemsetD8Async, "cuMemsetD8Async", (CUdeviceptr, unsigned char, size_t, CUstream))            \
    X(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr, CUdeviceptr, size_t, CUstream))       \
    X(StreamCreate, "cuStreamCreate", (CUstream *, unsigned int))                                  \
    X(StreamDestroy, "cuStreamDestroy_v2", (CUstream))                                             \
    X(StreamSynchronize, "cuStreamSynchronize", (CUstream))                                        \
    X(EventCreate, "cuEventCreate", (CUevent *, unsigned int))                                     \
    X(EventDestroy, "cuEventDestroy_v2", (CUevent))                                                \
    X(EventRecord, "cuEventRecord", (CUevent, CUstream))                                           \
    X(EventSynchronize, "cuEventSynchronize", (CUevent))                                           \
    X(EventElapsedTime, "cuEventElapsedTime_v2", (float *, CUevent, CUevent))                      \
    X(StreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream, CUstreamCaptureMode))              \
    X(StreamEndCapture, "cuStreamEndCapture", (CUstream, CUgraph *))                               \
    X(GraphInstantiate, "cuGraphInstantiateWithFlags", (CUgraphExec *, CUgraph, unsigned long long)) \
    X(GraphLaunch, "cuGraphLaunch", (CUgraphExec, CUstream))                                       \
    X(GraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec))                                       \
    X(GraphDestroy, "cuGraphDestroy", (CUgraph))                                                   \
    X(GraphGetNodes, "cuGraphGetNodes", (CUgraph, CUgraphNode *, size_t *))                        \
    X(GraphNodeGetType, "cuGraphNodeGetType", (CUgraphNode, CUgraphNodeType *))                    \
    X(GraphKernelNodeGetAttribute, "cuGraphKernelNodeGetAttribute",                                \
      (CUgraphNode, CUkernelNodeAttrID, CUkernelNodeAttrValue *))                                  \
    X(ModuleLoadData, "cuModuleLoadData", (CUmodule *, const void *))                              \
    X(ModuleGetFunction, "cuModuleGetFunction", (CUfunction *, CUmodule, const char *))            \
    X(ModuleUnload, "cuModuleUnload", (CUmodule))                                                  \
    X(LaunchKernel, "cuLaunchKernel",                                                              \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,           \
       CUstream, void **, void **))                                                                \
    X(LaunchKernelEx, "cuLaunchKernelEx", (const CUlaunchConfig *, CUfunction, void **, void **))  \
    X(GetErrorString, "cuGetErrorString", (CUresult, const char **))                               \
    X(GetErrorName, "cuGetErrorName", (CUresult, const char **))

/* Entry points newer than the oldest driver qjit runs on (CUDA 12.0):
 * NULL where the driver lacks them, and what needs them says so. `qjit
 * bench` reads a captured forward's kernel nodes with them. */
#define CLI_CUDA_OPTIONAL_MAP(X)                                                                    \
    X(GraphKernelNodeGetParams, "cuGraphKernelNodeGetParams_v2", (CUgraphNode, CUDA_KERNEL_NODE_PARAMS *)) \
    X(GraphGetEdges, "cuGraphGetEdges_v2",                                                         \
      (CUgraph, CUgraphNode *, CUgraphNode *, CUgraphEdgeData *, size_t *))

typedef struct cli_cuda {
    void *handle;                /* dlopen handle; NULL until loaded */
    CUdevice device;
    CUcontext context;           /* the device's primary context, retained; NULL until then */
    int sm_count;
    int cc_major, cc_minor;      /* compute capability: 9, 0 on an H100 */
    char name[128];              /* "NVIDIA H100 80GB HBM3" */
    char error[1024];            /* why the last failing call failed, a sentence ("" if none) */
#define CLI_CUDA_MEMBER(member, symbol, params) CUresult (*member) params;
    CLI_CUDA_MAP(CLI_CUDA_MEMBER)
    CLI_CUDA_OPTIONAL_MAP(CLI_CUDA_MEMBER)
#undef CLI_CUDA_MEMBER
} cli_cuda;

/* Loads libcuda, initializes it, finds device `ordinal` (0 for a context
 * made with default options, as cli_context makes them), reads its name,
 * SM count and compute capability, retains its primary context and makes it current on the calling
 * thread. cu must be zeroed first; call cli_cuda_close afterwards, whatever
 * this returned.
 * @return QJIT_OK; QJIT_NO_DRIVER, QJIT_NO_DEVICE or QJIT_CUDA with the
 * reason in cu->error. */
qjit_status cli_cuda_open(cli_cuda *cu, int ordinal);
/* Releases the primary context and the library; a zeroed cu is fine. Free
 * what was allocated through cu first. */
void cli_cuda_close(cli_cuda *cu);
/* Makes the primary context current on the calling thread again.
 * @return QJIT_OK, or QJIT_CUDA with the reason in cu->error. */
qjit_status cli_cuda_bind(cli_cuda *cu);
/* Writes a failed call into cu->error as "WHAT failed: CUDA_ERROR_X (n):
 * text" and returns it (never NULL). */
const char *cli_cuda_error(cli_cuda *cu, CUresult r, const char *what);

#endif
