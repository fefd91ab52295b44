#!/usr/bin/env python3
# bench/stamps/instrument.py SRC DST: an instrumented copy of the template tree SRC (e.g. templates) at DST, for
# timing studies on the GPU (never the library's templates). In every non-persistent kernel of the TMA pipe,
# thread 0 of each CTA stamps clock64() at fixed points into a __device__ array -- 0 the CTA's start, 1 its
# barriers set up, 2 the main loop's start, 3 + kt K tile kt landed (kt < 24), 27 the main loop drained,
# 28 / 29 before / after the split-K fix-up, 31 the CTA's end -- with %globaltimer at its start and end; the last
# CTA to end writes every CTA's stamps over the output Y (a 0x51535453 word, the grid, then 36 words a CTA),
# which bench/stamps/harness.c reads back and bench/stamps/phases.py sums up. No call and no printf in the
# kernel: either makes ptxas serialize the warpgroup MMAs. Each patch asserts that its place in the templates is
# still there, so a template edit that moves one fails here, not silently.
import shutil, sys, os
src, dst = sys.argv[1], sys.argv[2]
if os.path.exists(dst): shutil.rmtree(dst)
shutil.copytree(src, dst)
def patch(path, old, new, count=1):
    p = os.path.join(dst, path); s = open(p).read()
    n = s.count(old)
    assert n >= count, (path, old, n)
    s = s.replace(old, new, count if count > 0 else -1)
    open(p, 'w').write(s)
STAMPS = r'''
#define QS_N 32
#define QS_MAXCTA 2048
__device__ unsigned qs_buf[QS_MAXCTA][QS_N];
__device__ unsigned long long qs_g[QS_MAXCTA][2];
__device__ unsigned qs_count, qs_launch;
static __device__ __forceinline__ unsigned long long qs_gt() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
static __device__ __forceinline__ unsigned qs_cta() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
#define QS(i) do { if (tid == 0 && qs_cta() < QS_MAXCTA) qs_buf[qs_cta()][(i)] = (unsigned)(clock64() - qs_c0); } while (0)
#define QS_END() do { if (tid == 0) qs_end(qs_c0, Y, M, N); } while (0)
static __device__ __forceinline__ void qs_end(long long c0, u16 *Yout, int M, int N)
{
    const unsigned c = qs_cta();
    if (c < QS_MAXCTA) { qs_buf[c][QS_N - 1] = (unsigned)(clock64() - c0); qs_g[c][1] = qs_gt(); }
    __threadfence();
    const unsigned total = gridDim.x * gridDim.y * gridDim.z;
    if (atomicAdd(&qs_count, 1u) != total - 1) return;
    __threadfence();
    qs_count = 0;
    /* The last CTA: every CTA's stamps into the output, as many as it holds. */
    const long long words = (long long)M * N / 2;
    if (words < 4) return;
    unsigned *y = (unsigned *)Yout;
    y[0] = 0x51535453u; y[1] = gridDim.x; y[2] = gridDim.y; y[3] = gridDim.z;
    for (unsigned i = 0; i < total && i < QS_MAXCTA && 4 + (long long)(i + 1) * (QS_N + 4) <= words; ++i) {
        unsigned *o = y + 4 + i * (QS_N + 4);
        for (int q = 0; q < QS_N; ++q) o[q] = __ldcg(&qs_buf[i][q]);
        const unsigned long long g0 = __ldcg(&qs_g[i][0]), g1 = __ldcg(&qs_g[i][1]);
        o[QS_N] = (unsigned)g0; o[QS_N + 1] = (unsigned)(g0 >> 32); o[QS_N + 2] = (unsigned)g1; o[QS_N + 3] = (unsigned)(g1 >> 32);
    }
}
'''
patch("gemm_tma.cu", 'extern "C" __global__ void __launch_bounds__', STAMPS + '\nextern "C" __global__ void __launch_bounds__')
patch("gemm_tma.cu", '{{ render("lib/wgmma_head.cu", { p = p }) }}\n',
      '{{ render("lib/wgmma_head.cu", { p = p }) }}\n    const long long qs_c0 = clock64();\n    if (tid == 0 && qs_cta() < QS_MAXCTA) { for (int q = 1; q < QS_N; ++q) qs_buf[qs_cta()][q] = 0; qs_g[qs_cta()][0] = qs_gt(); }\n    QS(0);\n')
# after the barrier init's __syncthreads (first one after mbar_init_fence)
patch("gemm_tma.cu", '        mbar_init_fence();\n    }\n    __syncthreads();\n', '        mbar_init_fence();\n    }\n    __syncthreads();\n    QS(1);\n')
# non-persistent branch: before its main loop, after drain, after split_k, at the end
s = open(os.path.join(dst, "gemm_tma.cu")).read()
i = s.index('//% else\n//%   if p.epi_early == 1 then\n    /* The epilogue\'s loads, made before the main loop so that they have')
tail = s[i:]
tail = tail.replace('{{ (render("lib/kt_loop.cu", { p = p, body = "gemm_tma_step.cu" }):gsub("\\n$", "")) }}\n{{ render("lib/wgmma_drain.cu", { p = p }) }}\n',
                    '    QS(2);\n{{ (render("lib/kt_loop.cu", { p = p, body = "gemm_tma_step.cu" }):gsub("\\n$", "")) }}\n{{ render("lib/wgmma_drain.cu", { p = p }) }}\n    QS(27);\n', 1)
tail = tail.replace('{{ render("lib/split_k.cu", { p = p }) }}\n{{ render("lib/epilogue.cu", { p = p, pre = p.epi_early == 1 }) }}\n',
                    '    QS(28);\n{{ render("lib/split_k.cu", { p = p }) }}\n    QS(29);\n{{ render("lib/epilogue.cu", { p = p, pre = p.epi_early == 1 }) }}\n', 1)
assert tail.count('QS(') == 4, tail.count('QS(')
# the kernel's last closing brace
j = tail.rindex('\n}')
tail = tail[:j] + '\n    QS_END();' + tail[j:]
open(os.path.join(dst, "gemm_tma.cu"), 'w').write(s[:i] + tail)
patch("lib/split_k.cu", '        if (!last)\n            return;\n', '        if (!last) {\n            QS_END();\n            return;\n        }\n')
patch("gemm_tma_step.cu", '        mbar_wait(full0 + ({{ it }} % STAGES) * 8, ({{ it }} / STAGES) & 1);\n',
      '        mbar_wait(full0 + ({{ it }} % STAGES) * 8, ({{ it }} / STAGES) & 1);\n        if (kt < 24) QS(3 + kt);\n')
print("instrumented templates in", dst)
