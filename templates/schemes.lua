-- schemes.lua -- the registry of quantization schemes: each scheme's name,
-- the spellings a key may use for it, and the module that says everything
-- the kernels need of it (schemes/<name>.lua, with its device code in
-- schemes/<name>.cu). Pipelines, dispatch and the runtime know schemes only
-- through these modules. The C side keeps the matching table of host
-- quantizers (runtime/schemes.c); the `id` of each module is its
-- qjit_scheme value there.
local R = {}

R.NAMES = { "w4a8-lqq", "w4a8-qoq", "w4a8-is", "w8a8", "w4a4", "w4ax", "w4ax-s" }

-- The scheme of a key that names none.
R.DEFAULT = "w4a8-lqq"

local ALIASES = {
  lqq = "w4a8-lqq", liquidquant = "w4a8-lqq", ["w4a8_lqq"] = "w4a8-lqq",
  qoq = "w4a8-qoq", qserve = "w4a8-qoq",
  is = "w4a8-is", ["integer-scale"] = "w4a8-is",
  int8 = "w8a8", ["w8a8-int8"] = "w8a8",
  int4 = "w4a4",
}
local PLANNED = {}

local KNOWN = {}
for _, n in ipairs(R.NAMES) do KNOWN[n] = true end

-- The canonical name of a spelling; fails INVALID_KEY for anything else.
function R.normalize(v)
  local s = v:lower()
  s = ALIASES[s] or s:gsub("_", "-")
  if KNOWN[s] then return s end
  local list = table.concat(R.NAMES, ", ")
  if PLANNED[s] then fail("INVALID_KEY", "scheme '" .. s .. "' has no template yet (implemented: " .. list .. ")") end
  fail("INVALID_KEY", "unknown scheme '" .. v .. "' (known: " .. list .. ")")
end

-- The module of a canonical scheme name.
function R.get(name)
  if not KNOWN[name] then fail("INVALID_KEY", "unknown scheme '" .. tostring(name) .. "'") end
  return import("schemes/" .. name .. ".lua")
end

return R
