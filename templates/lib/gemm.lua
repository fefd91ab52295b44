-- lib/gemm.lua -- what the GEMM pipelines share, as logic (their device
-- code is in the lib/*.cu partials): the fields of a key as numbers, the
-- scheme's facts a pipeline needs, the kernel's parameter slots (which the
-- runtime binds by name), and the checks of the fields every pipe has.
local G = {}

-- tile=BMxBNxBK, warps=WMxWN, stages, g, split of a canonical key, as numbers.
function G.dims(f)
  local bm, bn, bk = f.tile:match("^(%d+)x(%d+)x(%d+)$")
  local wm, wn = f.warps:match("^(%d+)x(%d+)$")
  return { bm = tonumber(bm), bn = tonumber(bn), bk = tonumber(bk), wm = tonumber(wm), wn = tonumber(wn),
           stages = tonumber(f.stages), g = tonumber(f.g), split = tonumber(f.split) }
end

-- The scheme module of a key and its facts for the key's group.
-- wu8=1: the layout with the tokens' row sums (the sums of unsigned
-- weights start at -128 * sum_k Xq[m, k], lib/wu8_start.cu), for a scheme
-- that has the unsigned form (its layout's unsigned_mma).
function G.scheme(f)
  local S = import("schemes.lua").get(f.scheme)
  local L = S.layout(tonumber(f.g))
  if f.wu8 then
    if not L.unsigned_mma then
      fail("INVALID_KEY", "wu8=1: scheme " .. f.scheme .. " has no unsigned form of its INT8 weights "
           .. "(its layout names no unsigned_mma)")
    end
    local U = {}
    for k, v in pairs(L) do U[k] = v end
    U.rowsum, U.wu8 = true, true
    L = U
  end
  return S, L
end

-- The scheme's facts every pipeline reads, as numbers on the launch facts p:
-- bits and w_vecs (16-byte vectors per lane per 16 x 64 weight block),
-- gparams_tiled (group parameters travel with each K tile) and
-- gparams_channel (one word per row pair, read once), fold (per-group INT32
-- rescale), rowsum (the kernel reads token row sums: in the epilogue, or
-- with wu8 as its sums' start), wu8 (the MMAs take unsigned weights, key
-- field wu8), a_is_loaded (the
-- MMA's A registers are the loaded words, not values computed from them).
function G.scheme_facts(p, L, g, sp)
  for k, v in pairs(sp) do p[k] = v end   -- the sparse residual's (G.sparse)
  p.bits, p.w_vecs = L.bits, L.bits // 4
  p.gparams_tiled = (L.gparams and g > 0) and 1 or 0
  p.gparams_channel = (L.gparams and g == 0) and 1 or 0
  p.fold = L.fold and 1 or 0
  p.rowsum = L.rowsum and 1 or 0
  p.wu8 = L.wu8 and 1 or 0
  p.a_is_loaded = L.a_is_loaded and 1 or 0
  p.act_bits = L.act_bits or 8   -- what the tokens are quantized to (a fused GEMM does it itself)
  p.parts = L.parts or 1         -- activation parts: two scales per token, two sums per output
  return p
end

-- A kernel's symbol: qjit_gemm_[<pipe>_]<scheme>[_sparse], so a profiler's
-- list tells the pipelines and the sparse kernels apart.
function G.kernel_name(pipe, f)
  return "qjit_gemm_" .. (pipe and pipe .. "_" or "") .. f.scheme:gsub("-", "_") .. (f.sparsity and "_sparse" or "")
end

-- The sparse residual of a key with a budget (sparsity > 0), after the
-- pipe's tile checks: the facts it adds (G.scheme_facts puts them on p) --
-- sparse, the residual block rbn x rbk, r_bytes (every 16 x 64 residual
-- block of the tile, 4 bits a weight, the most a K tile can carry),
-- rslots and r_ring -- and the bytes a stage adds; all 0 for a dense key.
-- With rslots = 0 a stage holds r_bytes of residual and one word of
-- presence bits (bit nbl * (BK / 64) + s for 16-row block nbl and 64-k step
-- s of the tile). With rslots = R (pipe=tma) the residual has a ring of its
-- own, R slots of r_bytes (r_ring bytes past the stages), and a stage holds
-- only its tile's presence word, the tile's ordinal among the tiles that
-- carry a residual and, per 16 x 64 block, where its residual starts.
-- With rpieces = P (pipe=tma, producer=wg) the residual's 16 x 64 blocks
-- take places in a ring of P blocks of 512 bytes past the stages (r_ring),
-- handed out in order and free again once the tile that held them has
-- been read; a stage holds 16 bytes of words (gemm_tma.cu).
function G.sparse(f, L, bn, bk)
  if not f.sparsity then return { sparse = 0, rbn = 0, rbk = 0, r_bytes = 0, rslots = 0, rpieces = 0, r_ring = 0 }, 0 end
  if not L.residual then
    fail("INVALID_KEY", "sparsity=" .. f.sparsity .. ": scheme " .. f.scheme .. (tonumber(f.g) == 0 and " per channel" or "")
         .. " takes no sparse residual (the two-level 4-bit schemes with groups do)")
  end
  local blocks = (bn // 16) * (bk // 64)
  if blocks > 32 then
    fail("INVALID_KEY", "sparsity=" .. f.sparsity .. ": tile " .. bn .. "x" .. bk .. " (weight rows x k) has "
         .. blocks .. " residual blocks of 16 x 64 per K tile; a sparse kernel takes at most 32")
  end
  local rslots = tonumber(f.rslots or "0")
  if rslots > 0 and f.pipe ~= "tma" then
    fail("INVALID_KEY", "rslots=" .. f.rslots .. ": a residual ring of its own is for pipe=tma, not pipe=" .. f.pipe)
  end
  local rpieces = tonumber(f.rpieces or "0")
  if rpieces > 0 and (f.pipe ~= "tma" or f.producer ~= "wg") then
    fail("INVALID_KEY", "rpieces=" .. f.rpieces .. ": a ring of residual blocks is filled by a producer warpgroup "
         .. "(pipe=tma, producer=wg)")
  end
  if rpieces > 0 and f.pingpong == "1" then
    fail("INVALID_KEY", "rpieces=" .. f.rpieces .. " and pingpong=1 are not combined")
  end
  if rpieces > 0 and rpieces < blocks then
    fail("INVALID_KEY", "rpieces=" .. f.rpieces .. ": tile " .. bn .. "x" .. bk .. " carries up to " .. blocks
         .. " residual blocks of 16 x 64 a K tile; the ring must hold at least that many")
  end
  local rbn, rbk = f.rblock:match("^(%d+)x(%d+)$")
  return {
    sparse = 1, rbn = tonumber(rbn), rbk = tonumber(rbk), r_bytes = bn * bk // 2, rho = f.sparsity,
    rslots = rslots, rpieces = rpieces, r_ring = rslots * (bn * bk // 2) + rpieces * 512,
  }, (rslots > 0 and (8 + 4 * blocks + 15) // 16 * 16) or (rpieces > 0 and 16) or bn * bk // 2 + 16
end

-- Quantizer CTAs of a fused GEMM at most (flags in the workspace).
G.FUSED_QUANTIZERS = 64

-- The kernel's parameter slots, in order: name, C type and what the runtime
-- binds there (kind: "w" a packed-weight section, "ws" a workspace section,
-- "map" a tensor map, "x"/"y" the call's tokens and output, "m"/"n"/"k" the
-- sizes, "param" the layer's parameter (a two-part layer's INT8 channels),
-- "bias" the layer's bias (N floats),
-- "epoch" the call's epoch). L: the scheme's layout facts.
function G.slots(p, L)
  local fused, s = p.fused == 1, {}
  local function add(name, ctype, kind, ref) s[#s + 1] = { name = name, ctype = ctype, kind = kind, ref = ref } end
  for _, w in ipairs(L.params) do add(w.name, w.ctype, "w", w.name) end
  if p.sparse == 1 then
    -- The residual: presence words per row block (built by the runtime
    -- from its row pointers) and the blocks.
    add("rmask", "const uint2 *__restrict__", "w", "rmask")
    add("rweight", "const uint4 *__restrict__", "w", "rweight")
  end
  -- A fused GEMM writes Xq, sx (and the row sums) itself.
  add("Xq", fused and "signed char *" or "const signed char *__restrict__", "ws", "xq")
  add("sx", fused and "float *" or "const float *__restrict__", "ws", "sx")
  if L.rowsum then add("rowsum", fused and "int *" or "const int *__restrict__", "ws", "rowsum") end
  add("Y", (p.epi == "i32" and "int" or "u16") .. " *__restrict__", "y")
  -- bias=1: the layer's bias, N floats (lib/epilogue.cu adds it).
  if p.bias == 1 then add("bias", "const float *__restrict__", "bias", "bias") end
  add("M", "int", "m")
  add("N", "int", "n")
  add("K", "int", "k")
  -- Two parts: the INT8 part's channels (the first of the layer's order).
  if p.parts == 2 then add("k8", "int", "param") end
  if (p.split > 1 and p.cluster == 1) or p.sk == 1 then
    -- Split-K (or stream-K's shared tiles) through the workspace: INT32
    -- partials and arrival counters.
    add("partials", "int *__restrict__", "ws", "partials")
    add("counters", "unsigned *__restrict__", "ws", "counters")
  elseif p.stash == 1 then
    -- The INT8 part's sums, stored at the part boundary (lib/stash.cu): a
    -- slot per CTA that can be resident, claimed in a bitmap of nwords
    -- words (the counters, zeroed by the activation kernel).
    add("stash", "int *__restrict__", "ws", "stash")
    add("counters", "unsigned *__restrict__", "ws", "counters")
    add("nwords", "int", "count", "counters")
  end
  if p.tma == 1 then
    -- TMA pipelines: tensor maps of Xq (per call), the packed weights and
    -- the group parameters (per layer and tile), built by the runtime.
    add("xmap", "const __grid_constant__ qjit_tmap", "map", "xq")
    add("wmap", "const __grid_constant__ qjit_tmap", "map", "qweight")
    if p.gparams_tiled == 1 then add("gmap", "const __grid_constant__ qjit_tmap", "map", "gparams") end
    -- A persistent kernel's output (per call): the tensor memory
    -- accelerator stores its tiles (lib/epilogue.cu); its INT32 twin,
    -- which stores from the registers, takes the same slots.
    if p.persist == 1 and p.pingpong == 0 then add("ymap", "const __grid_constant__ qjit_tmap", "map", "y") end
  end
  if fused then
    add("X", "const uint4 *__restrict__", "x")
    add("flags", "unsigned long long *", "ws", "flags")
    add("epoch", "unsigned long long", "epoch")
  end
  return s
end

-- Shared memory of one sm_90 multiprocessor (H100: 228 KB), and what each
-- CTA on it reserves.
G.SM_SMEM, G.CTA_RESERVED = 233472, 1024

-- CTAs of a kernel that shared memory lets one such multiprocessor hold at
-- once; G.resident: and its threads.
function G.smem_resident(p) return G.SM_SMEM // (p.smem + 128 + G.CTA_RESERVED) end
function G.resident(p) return math.min(G.smem_resident(p), 2048 // p.threads) end

-- The workspace sections a GEMM's call uses, in order, each sized
-- fixed + per_m * M + per_mtile * ceil(M / tile_m) bytes (the runtime lays
-- them out 256-byte aligned): the tokens quantized (Xq, first, then their
-- scales sx and, for zero-point epilogues, row sums), the quantizer flags
-- of a fused GEMM, and split-K's arrival counters and INT32 partials; or,
-- for a stash (p.stash at split 1), its bitmap and a slot of BM x BN sums
-- per CTA that can be resident on the device's sms multiprocessors (slots
-- in whole words of the bitmap).
function G.workspace(p, L, N, K, sms)
  -- Packed tokens take half the bytes (a two-part layer's INT4 part only:
  -- at most K bytes a row, k8 + (K - k8) / 2).
  local xpack = p.parts == 2 and 1 or (p.xpack or 1)
  -- tokens: what the activation kernel writes, which a caller may pass in
  -- instead (qjit_tokens): 1 the values, 2 their scales, 3 their row sums.
  -- Any other section the activation kernel zeroes (split-K counters, the
  -- stash's bitmap) the GEMM leaves zeroed when it ends.
  local ws = { { name = "xq", per_m = K // xpack, tokens = 1 }, { name = "sx", per_m = 4 * p.parts, tokens = 2 } }
  if L.rowsum then ws[#ws + 1] = { name = "rowsum", per_m = 4, tokens = 3 } end
  if p.fused == 1 then ws[#ws + 1] = { name = "flags", fixed = G.FUSED_QUANTIZERS * 8 } end
  if p.split > 1 and p.cluster == 1 then
    local tiles_n = (N + p.tile_n - 1) // p.tile_n
    ws[#ws + 1] = { name = "counters", per_mtile = tiles_n * 4 }
    ws[#ws + 1] = { name = "partials", per_mtile = tiles_n * p.split * p.tile_m * p.tile_n * 4 * p.parts }
  elseif p.sk == 1 then
    -- sk=1 (lib/work.cu): fewer split tiles than CTAs, a counter each;
    -- a slot of sums per CTA (one slice each).
    local ctas = sms * G.resident(p)
    ws[#ws + 1] = { name = "counters", fixed = ctas * 4 }
    ws[#ws + 1] = { name = "partials", fixed = ctas * p.tile_m * p.tile_n * 4 }
  elseif p.stash == 1 then
    local words = (sms * G.resident(p) + 31) // 32
    ws[#ws + 1] = { name = "counters", fixed = words * 4 }
    ws[#ws + 1] = { name = "stash", fixed = words * 32 * p.tile_m * p.tile_n * 4 }
  end
  return ws
end

-- The grid of a GEMM launch: x along N, y along M, z the split-K slices;
-- each dimension ceil((base + per_m * M) / div) * mul, at most max (if
-- given). A persistent kernel (p.persist): one CTA per output tile up to
-- the places sms multiprocessors have for it, along x; with sk=1 every
-- place (the last wave's tiles split along K take more CTAs than tiles).
function G.grid(p, N, sms)
  if p.sk == 1 and (sms or 0) > 0 then return { { base = sms * G.resident(p) }, { base = 1 }, { base = 1 } } end
  if p.persist == 1 then
    return { { per_m = 1, div = p.tile_m, mul = (N + p.tile_n - 1) // p.tile_n, max = sms * G.resident(p) }, { base = 1 },
             { base = 1 } }
  end
  return { { base = N, div = p.tile_n }, { per_m = 1, div = p.tile_m }, { base = p.split } }
end

-- The kernel's parameter list, as C.
function G.params(slots)
  local parts = {}
  for i, s in ipairs(slots) do parts[i] = s.ctype .. " " .. s.name end
  -- Four to a line, aligned under the kernel's opening parenthesis.
  local lines = {}
  for i = 1, #parts, 4 do lines[#lines + 1] = table.concat(parts, ", ", i, math.min(#parts, i + 3)) end
  return table.concat(lines, ",\n    ")
end

-- The slot names, joined: the kernel's signature, which the runtime checks
-- against the slots it binds.
function G.signature(slots)
  local n = {}
  for i, s in ipairs(slots) do n[i] = s.name end
  return table.concat(n, ",")
end

-- Device code a variant's fields add (f: its key's fields): the row quantizer
-- and flags of a fused GEMM, the cluster primitives of a cluster split-K
-- reduction.
function G.lib(p, f)
  local parts = {}
  if p.sparse == 1 then parts[#parts + 1] = render("lib/residual.cu", { p = p }) end
  if p.fused == 1 then
    parts[#parts + 1] = render("lib/act_div.cu", { bf16 = f.dtype == "bf16" }) .. render("lib/act_row.cu", { bits = p.act_bits })
                        .. render("lib/flags.cu")
  end
  if p.cluster > 1 then parts[#parts + 1] = render("lib/cluster.cu") end
  return table.concat(parts)
end

-- Checks reduce= against the split and the target; returns the CTAs per
-- cluster (along z, one per K slice) of a cluster reduction, else 1.
-- smem: the bytes the variant's shared memory holds; a cluster reduction
-- needs room for a region of the tile's INT32 sums (BM x BN x 4 bytes) per
-- peer, which the peers write (lib/split_k.cu), and past the first the
-- staged output tile (tile_bytes), written once the regions are read.
function G.check_reduce(f, d, arch, smem, tile_bytes)
  if f.reduce ~= "cluster" then return 1, smem end
  if arch.cc < 90 then fail("INVALID_KEY", "reduce=cluster needs thread-block clusters (sm_90 or later), not " .. f.arch) end
  if d.split < 2 then fail("INVALID_KEY", "reduce=cluster: split=" .. d.split .. " leaves nothing to reduce (use split >= 2)") end
  if d.split > 8 then fail("INVALID_KEY", "reduce=cluster: split=" .. d.split .. " exceeds the portable cluster size 8") end
  return d.split, math.max(smem, (d.split - 1) * d.bm * d.bn * 4, d.bm * d.bn * 4 + tile_bytes)
end

-- Two activation parts (two sums per output) run the multistage, decode
-- and warpgroup-MMA pipes, splitting K through the workspace after the
-- activation kernel: the cluster reduction and the fused quantizer keep one
-- sum per output.
function G.check_parts(f, L, pipe)
  if f.stash == "1" and (L.parts ~= 2 or (pipe ~= "wgmma" and pipe ~= "tma")) then
    fail("INVALID_KEY", "stash=1 (one set of sums, the first activation part's stored in the workspace) is for schemes "
         .. "with two activation parts on pipe=wgmma or tma, not scheme " .. f.scheme .. " on pipe=" .. pipe)
  end
  if L.act_bits == "8+4" and f.actq == "fused" then
    fail("INVALID_KEY", "scheme " .. f.scheme .. " (activations in two parts, in the layer's channel order) runs with "
         .. "actq=kernel, not actq=fused")
  end
  if L.parts ~= 2 then return end
  local why = (f.reduce == "cluster" and "reduce=cluster") or (f.actq == "fused" and "actq=fused")
  if why then
    fail("INVALID_KEY", "scheme " .. f.scheme .. " (two activation parts) runs with reduce=global and actq=kernel, "
         .. "not " .. why)
  end
end

-- Checks mma= against the scheme and the pipe (the INT4 MMA, mma=s4:
-- 4-bit weights whose scheme gives the .s4 form of its operand
-- (L.int4_mma; no group parameters), 4-bit tokens packed two per byte (a
-- two-part scheme's INT4 part), on the multistage pipe, dense, the tokens
-- quantized by the activation kernel); returns the 4-bit tokens' values per
-- byte (xpack: 2 for mma=s4, else 1).
function G.check_mma(f, L, pipe)
  if f.mma ~= "s4" then return 1 end
  local why = (not L.int4_mma and "scheme " .. f.scheme .. " has no INT4 operand form (4-bit weights and 4-bit "
                                  .. "tokens)")
              or (pipe ~= "multistage" and "pipe=" .. pipe .. " (the INT4 MMA runs on pipe=multistage)")
              or ((L.fold or L.gparams) and "group parameters")
              or (f.sparsity and "a sparse residual (INT8 values)")
              or (f.actq == "fused" and "actq=fused (the activation kernel packs the tokens)")
  if why then fail("INVALID_KEY", "mma=s4 (the INT4 tensor-core MMA) does not take " .. why) end
  return 2
end

-- Checks actq against the pipe; returns the facts a fused GEMM adds.
function G.check_actq(f, threads)
  if f.actq ~= "fused" then return 0, 0 end
  -- 16-byte chunks a thread keeps (and loads at once) per row: few, so the
  -- GEMM keeps its registers (decode 8x16x64: 64 with 2, 88 with 4; the
  -- 16x64x128 ring: 60 with 4, against 53-56 unfused). Rows of up to
  -- threads x 8 x chunks values are read once.
  return 1, (threads >= 256) and 2 or 4
end

return G
