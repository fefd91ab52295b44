-- variants.lua -- the variant space: which fields a key has, how each may be
-- spelled, their defaults and limits, and which template renders a kernel.
-- Policy lives here (and in dispatch.lua), not in C: adding a field, a value
-- or a scheme is an edit to this file and a template, with no rebuild.
local V = {}

local function bad(msg) fail("INVALID_KEY", msg) end

-- Architectures: compute capability, shared memory a block may opt into.
local ARCH = {
  sm_80  = { cc = 80, smem = 166912 },
  sm_86  = { cc = 86, smem = 101376 },
  sm_89  = { cc = 89, smem = 101376 },
  sm_90  = { cc = 90, smem = 232448 },
  sm_90a = { cc = 90, smem = 232448, exact = true },
}
V.ARCH = ARCH

local function norm_arch(v)
  local s = v:lower():gsub("^compute_", ""):gsub("^sm_", ""):gsub("^sm", "")
  if not s:match("^%d%d%d?[af]?$") then bad("arch '" .. v .. "' is not an architecture (e.g. sm_80, sm_90a)") end
  return "sm_" .. s
end

V.norm_arch = norm_arch

local SCHEMES = import("schemes.lua")

-- A field's integer: decimal digits only (no sign, point, exponent or hex
-- spelling; "1e1", "0x40", "8.0" are refused, not read as numbers), inside
-- [lo, hi], the values the kernels can take. Every integer field of a key is
-- read here.
local function int_in(name, v, lo, hi, whole)
  local n = v:match("^%d+$") and #v <= 12 and tonumber(v)
  if not n or n < lo or n > hi then
    bad(name .. "=" .. (whole or v) .. ": " .. (whole and "'" .. v .. "' " or "") .. "must be a decimal integer in ["
        .. lo .. ", " .. hi .. "]")
  end
  return n
end

local function norm_int(name, lo, hi)
  return function(v) return tostring(int_in(name, v, lo, hi)) end
end

-- Groups along K go up to 65536 channels (one group per row is g=0).
V.MAX_GROUP = 65536

-- A group size: 0 (per channel) or a positive count of k; which sizes a
-- scheme takes is the scheme's to say (its check_group).
local function norm_group(v)
  local s = v:lower()
  if s == "per-channel" or s == "channel" or s == "pc" or s == "k" then return "0" end
  if not s:match("^%d+$") then bad("g=" .. v .. " is not a group size (0/per-channel, 64, 128, 256, ...)") end
  return tostring(int_in("g", s, 0, V.MAX_GROUP))
end

-- "AxBx..." with `count` parts, part i in [1, max[i]].
local function norm_dims(name, count, max)
  return function(v)
    local parts = {}
    for p in v:lower():gmatch("[^x*]+") do parts[#parts + 1] = p end
    if #parts ~= count or v:match("^[x*]") or v:match("[x*]$") or v:match("[x*][x*]") then
      bad(name .. "=" .. v .. " needs " .. count .. " integers joined by 'x'")
    end
    for i, p in ipairs(parts) do parts[i] = tostring(int_in(name, p, 1, max[i], v)) end
    return table.concat(parts, "x")
  end
end

local function norm_choice(name, map)
  return function(v)
    local s = map[v:lower()]
    if not s then
      local known = {}
      for k, c in pairs(map) do if k == c then known[#known + 1] = k end end
      table.sort(known)
      bad(name .. "=" .. v .. " is not one of: " .. table.concat(known, ", "))
    end
    return s
  end
end

-- A budget: a decimal in [0, 1] with at most 6 places ("0.1", ".05",
-- "1.0"), spelled canonically without trailing zeros ("0.05", "1", "0").
local function norm_budget(v)
  local int, frac = v:match("^(%d*)%.?(%d*)$")
  if not int or (int == "" and frac == "") or #int > 6 or #frac > 6 then
    bad("sparsity=" .. v .. " is not a budget: a decimal in [0, 1] with at most 6 places (0, 0.05, 0.1, 1)")
  end
  frac = frac:gsub("0+$", "")
  local n = tonumber((int == "" and "0" or int) .. "." .. (frac == "" and "0" or frac))
  if n > 1 then bad("sparsity=" .. v .. ": a budget is at most 1 (every block)") end
  if frac == "" then return tostring(math.tointeger(n)) end
  return "0." .. frac
end

-- A residual block: 16, 32, 64 or 128 weight rows x 64 or 128 k.
local function norm_rblock(v)
  local rows, cols = v:lower():match("^(%d+)x(%d+)$")
  rows, cols = tonumber(rows), tonumber(cols)
  if not rows or not (rows == 16 or rows == 32 or rows == 64 or rows == 128) or not (cols == 64 or cols == 128) then
    bad("rblock=" .. v .. " is not a residual block: rows 16, 32, 64 or 128 x k 64 or 128 (e.g. 64x64)")
  end
  return rows .. "x" .. cols
end
V.norm_budget = norm_budget

-- The tokens' and outputs' 16-bit float type.
local DTYPE = norm_choice("dtype", { f16 = "f16", fp16 = "f16", half = "f16", float16 = "f16", bf16 = "bf16",
                                     bfloat16 = "bf16" })

-- Every kernel kind: its fields (normalizer, default) and template.
V.KINDS = {
  gemm = {
    -- pipe=multistage: shared-memory ring and mma.sync, tiles for any M;
    -- pipe=decode: weights streamed into registers, for a few tokens;
    -- pipe=wgmma: shared-memory ring and warpgroup MMA (sm_90a);
    -- pipe=tma: the same with the ring filled by the TMA (sm_90a).
    template = function(f)
      return ({ decode = "gemm_decode.cu", wgmma = "gemm_wgmma.cu", tma = "gemm_tma.cu" })[f.pipe]
             or "gemm_multistage.cu"
    end,
    fields = {
      scheme = { norm = SCHEMES.normalize, default = SCHEMES.DEFAULT },
      -- The group's default is the scheme's (a per-channel-only scheme: 0).
      g      = { norm = norm_group, default = function(f) return tostring(SCHEMES.get(f.scheme).default_group) end },
      -- Tiles up to 256 tokens x 1024 weight rows x 1024 k, up to 32 warps
      -- a side: past those no pipe has a kernel (each pipe's plan checks
      -- its own limits inside them).
      tile   = { norm = norm_dims("tile", 3, { 256, 1024, 1024 }), default = "64x128x64" },
      warps  = { norm = norm_dims("warps", 2, { 32, 32 }), default = "2x2" },
      stages = { norm = norm_int("stages", 2, 8), default = "4" },
      split  = { norm = norm_int("split", 1, 16), default = "1" },    -- split-K: CTAs per output tile
      pipe   = { norm = norm_choice("pipe", { multistage = "multistage", ms = "multistage", decode = "decode",
                                              gemv = "decode", wgmma = "wgmma", gmma = "wgmma",
                                              tma = "tma", ["wgmma-tma"] = "tma" }), default = "multistage" },
      -- actq=kernel: the tokens are quantized by the activation kernel
      -- launched before the GEMM; actq=fused: by the GEMM itself (one
      -- launch per forward; pipes multistage and decode).
      actq   = { norm = norm_choice("actq", { kernel = "kernel", launch = "kernel", fused = "fused",
                                              gemm = "fused" }), default = "kernel" },
      -- reduce=global: split-K slices meet in INT32 partials in the
      -- workspace (the last CTA of a tile adds them); reduce=cluster: the
      -- slices of a tile form a thread-block cluster and add over
      -- distributed shared memory (sm_90+, split 2..8).
      reduce = { norm = norm_choice("reduce", { global = "global", workspace = "global", cluster = "cluster",
                                                dsmem = "cluster" }), default = "global" },
      epi    = { norm = norm_choice("epi", { f16 = "f16", fp16 = "f16", half = "f16", i32 = "i32", int32 = "i32", acc = "i32" }), default = "f16" },
      -- dtype=bf16: the tokens (X, read by actq=fused) and the output (epi
      -- f16) are BF16; dtype=f16 (the default, unnamed in the canonical
      -- key): FP16.
      dtype  = { norm = DTYPE },
      -- bias=1: the epilogue adds the layer's bias (one FP32 value per
      -- output channel) before rounding to the output's floats; 0 (the
      -- default, unnamed in the canonical key): none. Not with epi=i32.
      bias   = { norm = norm_int("bias", 0, 1) },
      -- sparsity=rho: the kernel adds a sparse 4-bit residual (runtime/
      -- residual.h) on the weight blocks that carry one, in the main loop
      -- into the same accumulators; rho is the budget it is made for (0 or
      -- absent: dense, the key then names neither field). rblock=BNxBK: the
      -- residual's blocks (rows 16/32/64/128, k 64/128; default 64x64).
      -- rslots=R (pipe=tma): the residual in a ring of its own, R slots of
      -- one tile's residual filled by residual-carrying K tile, instead of
      -- a tile's room in every stage (0 or absent, the default).
      sparsity = { norm = norm_budget },
      rblock = { norm = norm_rblock },
      rslots = { norm = norm_int("rslots", 0, 4) },
      -- rpieces=P (pipe=tma, producer=wg): the residual's 16 x 64 blocks
      -- in a ring of P (8, 16, 32 or 64) of their own, handed out in order
      -- to the K tiles that carry some, instead of a whole tile's room in
      -- every stage (0 or absent, the default).
      rpieces = { norm = norm_int("rpieces", 0, 64) },
      -- stash=1 (two activation parts, pipe=wgmma/tma): one set of sums, the
      -- first part's stored in the workspace at the part boundary and read
      -- back by the epilogue, instead of a second set in registers (0 or
      -- absent, the default).
      stash  = { norm = norm_int("stash", 0, 1) },
      -- producer=wg (pipe=tma, dense): the ring filled by a warpgroup of
      -- its own (one lane issues the copies) that gives its registers to
      -- the MMA warpgroups (setmaxnreg) and leaves once its last copy is
      -- issued; producer=thread (the default, unnamed in the canonical
      -- key): by the first thread of the first warp, between its MMAs.
      producer = { norm = norm_choice("producer", { thread = "thread", wg = "wg" }) },
      -- persist=1 (producer=wg, split=1): a persistent kernel, one CTA per
      -- place the SMs have for it, each walking output tiles in bands of
      -- token tiles along the weight rows (L2 reuse); the producer fills
      -- the next tile's stages during this tile's epilogue, which has its
      -- own room past the ring. 0 (the default, unnamed): a CTA per tile.
      persist = { norm = norm_int("persist", 0, 1) },
      -- excp=1 (producer=wg, split=1): explicit dequantization -- a
      -- warpgroup of its own dequantizes each K tile's weights into an
      -- INT8 ring in shared memory, and the MMA warpgroups read both
      -- operands from shared memory (LiquidGEMM's ExCP, measured against
      -- the register path). 0 (the default, unnamed): the MMA warpgroups
      -- dequantize into their A registers (ImFP).
      excp = { norm = norm_int("excp", 0, 1) },
      -- wu8=1 (pipe=tma or wgmma, dense; a scheme whose INT8 weights are
      -- an unsigned byte XOR 0x80, its layout's unsigned_mma): the MMAs take the unsigned
      -- bytes U8' = Q8' + 128 (one instruction less per four weights) and
      -- each sum starts at -128 * sum_k Xq[m, k] (the tokens' row sums,
      -- which the activation kernel then writes). 0 (the
      -- default, unnamed): the MMAs take Q8'.
      wu8 = { norm = norm_int("wu8", 0, 1) },
      -- pingpong=1 (persist=1): the two MMA warpgroups each compute whole
      -- output tiles of tile=BMxBN, the CTA's tiles in turn, so one
      -- warpgroup's epilogue overlaps the other's main loop (the tile is
      -- not split between them). 0 (the default, unnamed): both split
      -- each tile.
      pingpong = { norm = norm_int("pingpong", 0, 1) },
      -- sk=1 (persist=1): the tiles of the last, partial wave of CTAs
      -- split along K, a slice a CTA, where that pays (the kernel's cost
      -- model decides per call, lib/work.cu); a tile's slices add their
      -- INT32 sums in the workspace (exact) and the last to finish stores
      -- the tile. The grid then takes every place the SMs have. 0 (the
      -- default, unnamed): whole tiles only.
      sk = { norm = norm_int("sk", 0, 1) },
      -- band=B (persist=1): bands of B token tiles; 0 (the default,
      -- unnamed): as many as keep a band's tokens within a share of L2.
      band = { norm = norm_int("band", 0, 64) },
      -- mma=s4 (schemes of 4-bit weights and one part of 4-bit tokens,
      -- pipe=multistage): the INT4 tensor-core MMA (mma.sync m16n8k64 .s4,
      -- sm_80/86/89), the tokens packed two per byte by the activation
      -- kernel (act-quant pack=2); mma=s8 (the default, unnamed in the
      -- canonical key): both operands widened to INT8 for the INT8 MMA.
      -- sm_90 has no INT4 tensor cores: ptxas expands each .s4 MMA into
      -- two INT8 ones and about 170 instructions that widen its operands.
      mma    = { norm = norm_choice("mma", { s8 = "s8", int8 = "s8", s4 = "s4", int4 = "s4" }) },
      arch   = { norm = norm_arch },
    },
  },
  ["act-quant"] = {
    template = "act_quant.cu",
    fields = {
      -- bits=8: INT8 (-127..127); bits=4: INT4 values (-7..7), one per byte;
      -- bits=8+4: a two-part layer's: the tokens gathered into the
      -- layer's channel order, its first k8 channels INT8, the rest INT4,
      -- each part with its own scale.
      bits    = { norm = norm_choice("bits", { ["8"] = "8", ["4"] = "4", ["8+4"] = "8+4" }), default = "8" },
      -- rowsum=1: also the tokens' integer row sums (for epilogues that
      -- subtract a zero point).
      rowsum  = { norm = norm_choice("rowsum", { ["0"] = "0", ["1"] = "1", no = "0", yes = "1" }), default = "0" },
      threads = { norm = norm_int("threads", 32, 1024), default = "256" },
      -- pack=2 (bits=4): two values per byte, for the INT4 MMA (a GEMM's
      -- mma=s4): in each 32 channels, byte b holds channel b in its low
      -- nibble and channel b + 16 in its high one; pack=1 (the default,
      -- unnamed in the canonical key): one value per byte.
      pack    = { norm = norm_int("pack", 1, 2) },
      -- scales=1 (bits=8+4): one scale per token for both parts,
      -- max(max8 / 127, max4 / 7) (shared-scale schemes); scales=2 (the default, unnamed
      -- in the canonical key): one per part.
      scales  = { norm = norm_int("scales", 1, 2) },
      -- cache=C (bits=8+4): rows of at most C channels (a multiple of 4 x
      -- threads, up to 32768) are copied into shared memory first and
      -- gathered from there (for few tokens); 0 (the default, unnamed): the
      -- gathers read memory.
      cache   = { norm = norm_int("cache", 0, 32768) },
      -- ctas=P: each token over P CTAs (grid z), each finding the row's
      -- maxima and quantizing every Pth round of the thread's positions (for
      -- few tokens: a long row's divisions spread over P SMs); rows without
      -- sums. 1 (the default, unnamed): one CTA per token.
      ctas    = { norm = norm_int("ctas", 1, 16) },
      -- inplace=1 (bits=8+4 with scales=1, no cache): each value quantized
      -- at its own channel (the caller's order), its part from the layer's
      -- INT8 channels' set (a section of K bits): no gather, for one-sum
      -- GEMMs over weights in the caller's order; 0 (the default,
      -- unnamed): gathered into the layer's order.
      inplace = { norm = norm_int("inplace", 0, 1) },
      -- dtype=bf16: the tokens are BF16; f16 (the default, unnamed): FP16.
      dtype   = { norm = DTYPE },
      arch    = { norm = norm_arch },
    },
  },
}

local ALIASES = { group = "g", rho = "sparsity", ["residual-block"] = "rblock", kind = "kernel", pipeline = "pipe", stage = "stages",
                  epilogue = "epi", out = "epi", warp = "warps", cta = "tile", target = "arch", sm = "arch" }
local KIND_ALIASES = { gemm = "gemm", ["act-quant"] = "act-quant", actquant = "act-quant", quant = "act-quant",
                       ["act_quant"] = "act-quant" }

-- Parses "name=value; name=value" (separators ; , or spaces) into a table.
local function parse(text)
  local raw = {}
  for item in text:gmatch("[^;,%s]+") do
    local name, value = item:match("^([^=]+)=(.+)$")
    if not name then bad("'" .. item .. "' is not name=value (key: " .. text .. ")") end
    name = name:lower()
    name = ALIASES[name] or name
    if raw[name] then bad("field '" .. name .. "' given twice (key: " .. text .. ")") end
    raw[name] = value
  end
  return raw
end

-- The fields a key text names (aliases resolved), before defaults.
V.raw = parse

-- Returns the canonical key and the parsed fields. default_arch fills a
-- missing arch ("" means none: then the key must name one).
function V.parse(text, default_arch)
  local raw = parse(text)
  local kind = KIND_ALIASES[(raw.kernel or "gemm"):lower()]
  if not kind then bad("unknown kernel '" .. raw.kernel .. "' (known: gemm, act-quant)") end
  raw.kernel = nil
  local spec = V.KINDS[kind]
  local f = { kernel = kind }
  for name, value in pairs(raw) do
    if not spec.fields[name] then
      local known = {}
      for k in pairs(spec.fields) do known[#known + 1] = k end
      table.sort(known)
      bad("unknown field '" .. name .. "' for kernel " .. kind .. " (fields: kernel, " .. table.concat(known, ", ") .. ")")
    end
    f[name] = spec.fields[name].norm(value)
  end
  if not f.arch then
    if not default_arch or default_arch == "" then bad("the key names no arch and no default target is set") end
    f.arch = norm_arch(default_arch)
  end
  if not ARCH[f.arch] then
    local known = {}
    for k in pairs(ARCH) do known[#known + 1] = k end
    table.sort(known)
    fail("UNSUPPORTED_ARCH", "no template targets " .. f.arch .. " (supported: " .. table.concat(known, ", ") .. ")")
  end
  -- Plain defaults first: a default may be a function of other fields.
  for name, field in pairs(spec.fields) do
    if not f[name] and type(field.default) == "string" then f[name] = field.default end
  end
  for name, field in pairs(spec.fields) do
    if not f[name] and field.default then f[name] = field.default(f) end
  end
  if f.scheme then
    local why = SCHEMES.get(f.scheme).check_group(tonumber(f.g))
    if why then bad(why) end
  end
  -- A dense kernel's key names no budget and no residual block.
  if f.sparsity == "0" then f.sparsity = nil end
  if f.rblock and not f.sparsity then bad("rblock=" .. f.rblock .. " needs a budget (sparsity > 0)") end
  if f.sparsity and not f.rblock then f.rblock = "64x64" end
  if f.rslots == "0" then f.rslots = nil end
  if f.rslots and not f.sparsity then bad("rslots=" .. f.rslots .. " needs a budget (sparsity > 0)") end
  if f.rpieces == "0" then f.rpieces = nil end
  if f.rpieces and not f.sparsity then bad("rpieces=" .. f.rpieces .. " needs a budget (sparsity > 0)") end
  if f.rpieces and not ({ ["8"] = true, ["16"] = true, ["32"] = true, ["64"] = true })[f.rpieces] then
    bad("rpieces=" .. f.rpieces .. " must be 8, 16, 32 or 64 (a power of two: a block's place is its rank mod P)")
  end
  if f.stash == "0" then f.stash = nil end
  if f.producer == "thread" then f.producer = nil end
  if f.producer and (f.kernel ~= "gemm" or f.pipe ~= "tma") then
    bad("producer=wg is for the TMA pipe (pipe=tma), not pipe=" .. tostring(f.pipe))
  end
  -- With a producer warpgroup a residual comes with its tile, into the
  -- stage or into a ring of blocks (rpieces) that its second warp fills,
  -- not into a ring of tiles.
  if f.producer and f.rslots then
    bad("rslots=" .. f.rslots .. " (the residual in a ring of its own) is filled by the MMA warpgroups' warps; "
        .. "with producer=wg the residual comes with its tile: leave rslots out")
  end
  if f.persist == "0" then f.persist = nil end
  if f.persist and (f.producer ~= "wg" or f.split ~= "1") then
    bad("persist=1 walks whole output tiles with a producer warpgroup: it needs producer=wg and split=1, not "
        .. (f.producer ~= "wg" and "producer=" .. (f.producer or "thread") or "split=" .. f.split))
  end
  if f.excp == "0" then f.excp = nil end
  if f.excp and (f.producer ~= "wg" or f.split ~= "1") then
    bad("excp=1 adds a dequantization warpgroup beside the producer warpgroup: it needs producer=wg and split=1, not "
        .. (f.producer ~= "wg" and "producer=" .. (f.producer or "thread") or "split=" .. f.split))
  end
  if f.excp and f.sparsity then
    bad("excp=1 dequantizes dense weights into its INT8 ring; a kernel with a residual (sparsity=" .. f.sparsity
        .. ") adds it in the MMA warpgroups' registers: leave excp out")
  end
  if f.wu8 == "0" then f.wu8 = nil end
  if f.wu8 and (f.kernel ~= "gemm" or (f.pipe ~= "tma" and f.pipe ~= "wgmma") or f.excp) then
    bad("wu8=1 gives the warpgroup MMA's register operand unsigned weights: it is for the pipes tma and wgmma "
        .. "without excp=1, not " .. (f.excp and "excp=1" or "pipe=" .. tostring(f.pipe)))
  end
  if f.pingpong == "0" then f.pingpong = nil end
  if f.pingpong and not f.persist then
    bad("pingpong=1 hands a persistent kernel's tiles to its MMA warpgroups in turn: it needs persist=1")
  end
  if f.sk == "0" then f.sk = nil end
  if f.sk and not f.persist then
    bad("sk=1 splits a persistent kernel's last wave of tiles along K: it needs persist=1")
  end
  if f.sk and f.pingpong then
    bad("sk=1 and pingpong=1 are not combined (the warpgroups' turns are whole tiles)")
  end
  if f.band == "0" then f.band = nil end
  if f.band and not f.persist then bad("band=" .. f.band .. " orders a persistent kernel's tiles: it needs persist=1") end
  if f.mma == "s8" then f.mma = nil end
  if f.pack == "1" then f.pack = nil end
  if f.scales == "2" then f.scales = nil end
  if f.cache == "0" then f.cache = nil end
  if f.ctas == "1" then f.ctas = nil end
  if f.inplace == "0" then f.inplace = nil end
  if f.dtype == "f16" then f.dtype = nil end
  if f.bias == "0" then f.bias = nil end
  if f.bias and f.epi == "i32" then bad("bias=1 needs epi=f16: the INT32 accumulators take no bias") end
  local names = {}
  for k in pairs(f) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do parts[#parts + 1] = k .. "=" .. f[k] end
  return table.concat(parts, ";"), f, spec
end

function V.canonicalize(text, default_arch)
  local canon = V.parse(text, default_arch)
  return canon
end

-- The canonical key of a key text as a record the runtime reads: the key,
-- its kernel kind and its target.
function V.canonical(text, default_arch)
  local canon, f = V.parse(text, default_arch)
  return { key = canon, kind = f.kernel, arch = f.arch }
end

-- The template and launch plan of a parsed key: its facts p (numbers the
-- template and the runtime need), the scheme's layout facts L (GEMMs) and
-- the kernel's parameter slots.
function V.plan(f)
  local spec = V.KINDS[f.kernel]
  local template = type(spec.template) == "function" and spec.template(f) or spec.template
  local plan = import((template:gsub("%.cu$", ".lua")))
  local p, L = plan.check(f, ARCH[f.arch])
  if f.kernel == "gemm" then p.bias = f.bias and 1 or 0 end
  return template, p, L, plan.slots(p, L)
end

-- Renders the kernel of a key; returns its source and the launch facts the
-- runtime needs (kept in the cache entry, so a cache hit needs no Lua).
function V.generate(text, default_arch)
  local canon, f = V.parse(text, default_arch)
  local template, facts, L, slots = V.plan(f)
  local gemm = import("lib/gemm.lua")
  facts.key = canon
  facts.kind = f.kernel
  facts.arch = f.arch
  facts.min_cc = ARCH[f.arch].cc
  facts.exact_cc = ARCH[f.arch].exact and 1 or 0
  facts.signature = gemm.signature(slots)
  facts.source = render(template, { key = canon, f = f, p = facts, scheme = L, slots = slots, gemm = gemm })
  return facts
end

return V
