//% -- lib/token_wait.cu -- where a GEMM waits for its tokens before reading Xq,
//% -- sx (and the row sums) or the split-K counters.
//% -- With programmatic dependent launch: for the activation kernel
//% -- (griddepcontrol.wait), then lets the next kernel launch
//% -- (griddepcontrol.launch_dependents). Fused (actq=fused): the CTAs of the NQ lowest
//% -- linear indices -- dispatched first, so running while any other CTA waits
//% -- -- quantize rows cta, cta + NQ, ... and zero the split-K counters, then
//% -- publish flags[cta] = epoch (a value unique to this call); every CTA waits
//% -- until the NQ flags hold it. Flags left by an earlier call, or garbage,
//% -- never equal a new epoch, so the workspace needs no reset.
//% if p.fused == 1 then
    {
        __shared__ float aq_red[THREADS / 32 * {{ p.rowsum == 1 and 2 or 1 }}];
        const int nctas = (int)(gridDim.x * gridDim.y * gridDim.z);
        const int nq = min(min(M, nctas), {{ quantizers }});
        const int cta = (int)((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x);
        if (cta < nq) {
            for (int m = cta; m < M; m += nq) {
                quantize_row<THREADS, {{ p.aq_cached }}, {{ p.rowsum == 1 and "true" or "false" }}>(X, (uint2 *)Xq, sx, {{ p.rowsum == 1 and "rowsum" or "nullptr" }}, m, K, aq_red);
                __syncthreads();
            }
//%   if p.split > 1 and p.cluster == 1 then
            for (int i = cta * THREADS + tid; i < (int)(gridDim.x * gridDim.y); i += nq * THREADS)
                counters[i] = 0u;
//%   end
            __threadfence();
            __syncthreads();
            if (tid == 0)
                st_release_gpu(flags + cta, epoch);
        }
        if (tid < 32)
            for (int j = tid; j < nq; j += 32)
                while (ld_acquire_gpu(flags + j) != epoch)
                    __nanosleep(64);
        __syncthreads();
    }
//% elseif p.pdl == 1 then
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    /* The kernel after this one, launched with PDL, may start now: its
     * blocks take the SMs as this grid's blocks leave (spread evenly by the runtime,
     * qjit__kernel_smem) and fetch their first weights before their wait. */
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
//% end
