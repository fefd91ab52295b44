// Floors of the decode path on the GPU in hand, measured the way `qjit bench`
// measures (CUDA events, L2 flushed before every timed call, median of 50):
//   - event time of one empty launch, of two, and of two with programmatic
//     dependent launch (the fixed cost any forward pays);
//   - host cost of one launch (enqueue time, no GPU time);
//   - weight-streaming read bandwidth: a read-only kernel over buffers the
//     size of the Llama layers' 4-bit weights, against a device copy;
//   - a grid-wide barrier (atomic arrival + spin) over 1-4 CTAs per SM.
// Standalone (not part of the library build); on the GPU machine:
//   nvcc -O3 -arch=sm_90a -o probe bench/probe.cu && ./probe
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <time.h>
#include <vector>

#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

__global__ void empty_kernel() {}
__global__ void pdl_primary() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }
__global__ void pdl_secondary() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

template <int UNROLL>
__global__ void __launch_bounds__(256) read_stream(const uint4 *p, size_t n16, unsigned *sink)
{
    unsigned x = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n16; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                         : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                         : "l"(p + i + u * stride));
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n16; i += stride)
        x ^= p[i].x;
    if (x == 0x9E3779B9u)
        *sink = x;
}

__global__ void grid_barrier(unsigned *counter, unsigned target)
{
    if (threadIdx.x == 0) {
        atomicAdd(counter, 1u);
        unsigned seen;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(seen) : "l"(counter) : "memory");
        } while (seen < target);
    }
    __syncthreads();
}

static void *flush_buf;
static const size_t FLUSH = 256u << 20;
static cudaStream_t st;

template <class F>
static double time_us(F launch, int reps = 50)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = 0; r < reps + 3; ++r) {
        CK(cudaMemsetAsync(flush_buf, r & 0xFF, FLUSH, st));
        CK(cudaEventRecord(a, st));
        launch();
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 3)
            t.push_back(ms * 1000.0f);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[t.size() / 2];
}

template <class F>
static double host_us(F launch)
{
    std::vector<double> t;
    for (int r = 0; r < 21; ++r) {
        timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < 100; ++i)
            launch();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        CK(cudaStreamSynchronize(st));
        t.push_back(((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 100.0 / 1000.0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

static void launch_pdl_pair()
{
    pdl_primary<<<1, 32, 0, st>>>();
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = dim3(132);
    cfg.blockDim = dim3(128);
    cfg.stream = st;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, pdl_secondary));
}

int main()
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    printf("device: %s, %d SMs, L2 %d MB\n", prop.name, sms, prop.l2CacheSize >> 20);
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaMalloc(&flush_buf, FLUSH));

    printf("\n== fixed cost (event time, L2 flushed, median of 50) ==\n");
    printf("1 empty launch (1 CTA):        %6.2f us\n", time_us([] { empty_kernel<<<1, 32, 0, st>>>(); }));
    printf("1 empty launch (132 CTAs):     %6.2f us\n", time_us([&] { empty_kernel<<<sms, 128, 0, st>>>(); }));
    printf("2 empty launches:              %6.2f us\n", time_us([&] {
        empty_kernel<<<1, 32, 0, st>>>();
        empty_kernel<<<sms, 128, 0, st>>>();
    }));
    printf("2 launches, PDL:               %6.2f us\n", time_us(launch_pdl_pair));

    printf("\n== host cost per call (enqueue, 100 calls, median of 21) ==\n");
    printf("cudaLaunchKernel empty:        %6.2f us\n", host_us([] { empty_kernel<<<1, 32, 0, st>>>(); }));
    printf("PDL pair (2 launches):         %6.2f us\n", host_us(launch_pdl_pair));

    printf("\n== grid barrier (event time) ==\n");
    unsigned *counter;
    CK(cudaMalloc(&counter, 4));
    for (int per = 1; per <= 4; per *= 2) {
        const unsigned n = sms * per;
        const double t = time_us([&] {
            cudaMemsetAsync(counter, 0, 4, st);
            grid_barrier<<<n, 128, 0, st>>>(counter, n);
        });
        const double e = time_us([&] {
            cudaMemsetAsync(counter, 0, 4, st);
            empty_kernel<<<n, 128, 0, st>>>();
        });
        printf("%4u CTAs: barrier %6.2f us, empty %6.2f us\n", n, t, e);
    }

    printf("\n== weight streaming (read-only kernel vs device copy) ==\n");
    const double mb[] = {8.4, 25.2, 45.1, 62.9, 117.4, 234.9};
    unsigned *sink;
    CK(cudaMalloc(&sink, 4));
    for (double m : mb) {
        const size_t bytes = (size_t)(m * 1e6) & ~(size_t)15;
        void *src, *dst;
        CK(cudaMalloc(&src, bytes));
        CK(cudaMalloc(&dst, bytes));
        CK(cudaMemset(src, 0x5A, bytes));
        const double copy = time_us([&] { cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st); });
        double best = 1e30;
        int best_ctas = 0, best_u = 0;
        for (int per = 1; per <= 16; per *= 2) {
            const int ctas = sms * per;
            double t4 = time_us([&] { read_stream<4><<<ctas, 256, 0, st>>>((const uint4 *)src, bytes / 16, sink); });
            double t8 = time_us([&] { read_stream<8><<<ctas, 256, 0, st>>>((const uint4 *)src, bytes / 16, sink); });
            if (t4 < best) best = t4, best_ctas = ctas, best_u = 4;
            if (t8 < best) best = t8, best_ctas = ctas, best_u = 8;
        }
        printf("%7.1f MB: copy %8.2f us (%6.0f GB/s r+w) | read %8.2f us (%6.0f GB/s, %d CTAs x 256, unroll %d)"
               " | read/copy-floor %.2f\n",
               m, copy, 2 * bytes / copy / 1e3, best, bytes / best / 1e3, best_ctas, best_u,
               (bytes / (2 * bytes / copy)) / best);
        CK(cudaFree(src));
        CK(cudaFree(dst));
    }
    return 0;
}
