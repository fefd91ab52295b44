-- engine.lua -- the template engine of qjit, embedded in the library.
--
-- A template is CUDA text with Lua only where the variant changes it:
--   //% code          a line whose first non-blank characters are //% is Lua
--                     code (the rest of the line) and emits no text;
--   {{ expr }}        interpolates a Lua expression into a text line;
--   {% code %}        runs Lua statements inside a text line (e.g.
--                     {% if x then %}...{% end %}); no "--" comments there,
--                     since they would swallow the rest of the line;
--   anything else     is text, emitted verbatim with its newline.
-- A template compiles to one Lua chunk in which template line i is chunk line
-- i, so Lua's messages name the template's own lines ("path:42: ...").
-- Interpolated numbers print as integers when integral, other floats with the
-- fewest digits that read back exactly; nil is an error naming the expression.
--
-- Templates and modules see (templates: their render() env first):
--   string table math utf8 (copies; no string.dump, no math.random), pairs
--   ipairs next select type tostring tonumber error assert pcall xpcall
--   setmetatable getmetatable rawget rawset rawequal rawlen, and
--   import(name)        value of a Lua module file, loaded once per call;
--   render(name, env)   text of a template file run with env;
--   fail(status, msg)   stops the call with a qjit status ("INVALID_KEY");
--   emit(...)           appends values to the output of the running template;
--   indent(text, n)     prefixes each non-empty line with n spaces (or string n).
-- No io, os, require, load, print. Files are named relative to the search
-- path, without ".." components.
--
-- lua_vm.c runs this chunk once per VM with a `host` table:
--   host.read(name)  -> text, path, sha256 hex of a file found on the search
--                       path, or nil, message (bad name, not found, unreadable)
--   host.where()     -> "path:line: " of the innermost template or module
--                       line running (engine frames skipped), or ""
--   host.statuses    set of the status names fail() accepts ("INVALID_KEY")
--   host.idsize      LUA_IDSIZE, to undo Lua's shortening of long file names
-- and keeps the returned table: call() runs one top-level call, fail_mt marks
-- the error objects of fail(), full_message() restores long file names.

local host = ...
local read, where, statuses, idsize = host.read, host.where, host.statuses, host.idsize

local concat = table.concat
local byte, find, format, gsub, match, rep, sub =
    string.byte, string.find, string.format, string.gsub, string.match, string.rep, string.sub
local mathtype, tointeger = math.type, math.tointeger
local error, getmetatable, load, next, pairs, pcall, select, setmetatable, tonumber, tostring,
      type, xpcall =
    error, getmetatable, load, next, pairs, pcall, select, setmetatable, tonumber, tostring,
    type, xpcall

-- Templates must not reach the shared string table through the metatable of
-- strings (they could change it for later calls).
getmetatable("").__metatable = "string"

local engine = {}

-- Error objects raised by fail(): {status_name, message}.
local FAIL = {__tostring = function(e) return e[2] end}
engine.fail_mt = FAIL

local LOADING = {}   -- marks a module whose chunk is running

-- Raises msg at the template or module line that called into the engine
-- (error(msg, 2) would name the engine itself after a tail call).
local function raise(msg)
    error(where() .. msg, 0)
end

-- State of the running top-level call: what it read and loaded. A fresh one
-- per call, so edited files take effect on the next call.
local state

------------------------------------------------------------------------------
-- Values as text
------------------------------------------------------------------------------

-- A float prints with the fewest digits that read back as the same value.
local function float_text(v)
    local i = tointeger(v)
    if i then return format("%d", i) end
    local s = format("%.14g", v)
    if tonumber(s) ~= v then s = format("%.17g", v) end
    return s
end

-- Text of an interpolated or emitted value; `what` names it in errors.
local function value_text(v, what)
    local t = type(v)
    if t == "string" then return v end
    if t == "number" then
        if mathtype(v) == "integer" then return format("%d", v) end
        return float_text(v)
    end
    if t == "boolean" then return v and "true" or "false" end
    if t == "nil" then raise(what .. " is nil") end
    local mt = getmetatable(v)
    if type(mt) == "table" and mt.__tostring then return tostring(v) end
    raise(format("%s is a %s, not text", what, t))
end

-- The function templates call for {{ expr }}.
local function interpolate(v, source)
    return value_text(v, source)
end

------------------------------------------------------------------------------
-- Compiling templates
------------------------------------------------------------------------------

-- A Lua string literal for any bytes, on one line (control characters,
-- quotes and backslashes as \ddd escapes).
local function quote(s)
    return '"' .. gsub(s, '[%c"\\\127]', function(c)
        return format("\\%03d", byte(c))
    end) .. '"'
end

local function append(s)
    return "__out[#__out+1]=" .. s
end

-- Lua code of one template line (no newline in it).
local function compile_line(line, eol, path, n)
    local code = match(line, "^%s*//%%(.*)$")
    if code then
        -- A carriage return would count as a line break in Lua.
        return (gsub(code, "\r", " "))
    end
    local parts, i = {}, 1
    while true do
        local s = find(line, "{[{%%]", i)
        if not s then break end
        local kind = sub(line, s + 1, s + 1)
        local close = kind == "{" and "}}" or "%}"
        local e = find(line, close, s + 2, true)
        if not e then
            return nil, format("%s:%d: '{%s' without '%s' (for literal text write {{ %q }})",
                               path, n, kind, close, "{" .. kind)
        end
        if s > i then parts[#parts + 1] = append(quote(sub(line, i, s - 1))) end
        local inner = sub(line, s + 2, e - 1)
        if kind == "{" then
            parts[#parts + 1] = append("__val((" .. inner .. "), " .. quote("{{" .. inner .. "}}") .. ")")
        else
            parts[#parts + 1] = inner
        end
        i = e + 2
    end
    local rest = sub(line, i) .. (eol and "\n" or "")
    if rest ~= "" then parts[#parts + 1] = append(quote(rest)) end
    return concat(parts, "; ")
end

-- Lua source of a template: a chunk called as chunk(out, interpolate, env).
local function compile(text, path)
    local lines, pos, n = {}, 1, 0
    while pos <= #text do
        local nl = find(text, "\n", pos, true)
        local line, eol
        if nl then
            line, eol, pos = sub(text, pos, nl - 1), true, nl + 1
        else
            line, eol, pos = sub(text, pos), false, #text + 1
        end
        n = n + 1
        local code, err = compile_line(line, eol, path, n)
        if not code then return nil, err end
        lines[n] = code
    end
    lines[1] = "local __out, __val, _ENV = ...; " .. (lines[1] or "")
    return concat(lines, "\n")
end

------------------------------------------------------------------------------
-- Files
------------------------------------------------------------------------------

-- Text and path of a file, read once per call and recorded in state.files.
local function source(st, name)
    local s = st.sources[name]
    if s then return s.text, s.path end
    local text, path, hash = read(name)
    if not text then return nil, path end
    st.sources[name] = {text = text, path = path}
    local f = st.files
    f[#f + 1] = name; f[#f + 1] = path; f[#f + 1] = hash
    -- Lua shows long chunk names as "..." and their last idsize-4 bytes.
    if #path >= idsize then st.short["..." .. sub(path, -(idsize - 4))] = path end
    return text, path
end

local function check_name(name, fname)
    if type(name) ~= "string" then
        raise(format("%s: file name must be a string, got %s", fname, type(name)))
    end
end

------------------------------------------------------------------------------
-- The library templates and modules see
------------------------------------------------------------------------------

local function copy(t)
    local c = {}
    for k, v in pairs(t) do c[k] = v end
    return c
end

-- Pops output buffers pushed after `depth` (a render that failed under pcall).
local function unwind(st, depth, ...)
    local stack = st.stack
    for i = #stack, depth + 1, -1 do stack[i] = nil end
    return ...
end

local function make_lib(st)
    local lib = {
        _VERSION = _VERSION,
        assert = assert, error = error, getmetatable = getmetatable, ipairs = ipairs,
        next = next, pairs = pairs, rawequal = rawequal, rawget = rawget, rawlen = rawlen,
        rawset = rawset, select = select, setmetatable = setmetatable, tonumber = tonumber,
        tostring = tostring, type = type,
        string = copy(string), table = copy(table), math = copy(math), utf8 = copy(utf8),
    }
    lib.string.dump = nil
    -- Generated text must depend on the key only.
    lib.math.random, lib.math.randomseed = nil, nil

    function lib.pcall(f, ...)
        return unwind(st, #st.stack, pcall(f, ...))
    end

    function lib.xpcall(f, handler, ...)
        return unwind(st, #st.stack, xpcall(f, handler, ...))
    end

    function lib.fail(status, message)
        local name = type(status) == "string" and gsub(status, "^QJIT_", "") or nil
        if not name or not statuses[name] or name == "OK" then
            raise(format("fail: unknown status %s", tostring(status)))
        end
        if message == nil then message = name end
        error(setmetatable({name, tostring(message)}, FAIL), 0)
    end

    function lib.emit(...)
        local out = st.stack[#st.stack]
        if not out then raise("emit: no template is being rendered") end
        for i = 1, select("#", ...) do
            out[#out + 1] = value_text((select(i, ...)), format("emit argument %d", i))
        end
    end

    -- Prefixes every non-empty line of text with n spaces (or with the string n).
    function lib.indent(text, n)
        text = value_text(text, "indent: text")
        local pad = n or 4
        if type(pad) == "number" then pad = rep(" ", pad) end
        if type(pad) ~= "string" then raise("indent: n must be a number or a string") end
        return (gsub(text, "[^\n]+", function(l) return pad .. l end))
    end

    function lib.import(name)
        check_name(name, "import")
        local m = st.modules[name]
        if m == LOADING then
            raise(format("import: '%s' is still loading (circular import, or its first load failed)", name))
        end
        if m ~= nil then return m end
        local text, path = source(st, name)
        if not text then raise(path) end
        local chunk, err = load(text, "@" .. path, "t", setmetatable({}, {__index = lib}))
        if not chunk then error(err, 0) end
        st.modules[name] = LOADING
        m = chunk(name)
        if m == nil then m = true end
        st.modules[name] = m
        return m
    end

    function lib.render(name, env)
        check_name(name, "render")
        if env == nil then env = {} end
        if type(env) ~= "table" then
            raise(format("render: env must be a table, got %s", type(env)))
        end
        local fn = st.templates[name]
        if not fn then
            local text, path = source(st, name)
            if not text then raise(path) end
            local code, err = compile(text, path)
            if code then fn, err = load(code, "@" .. path, "t", {}) end
            if not fn then error(err, 0) end
            st.templates[name] = fn
        end
        -- Globals a template sets stay in its own scope; reads fall back to
        -- env, then to the library.
        local scope = setmetatable({}, {__index = function(_, k)
            local v = env[k]
            if v == nil then v = lib[k] end
            return v
        end})
        local out, stack = {}, st.stack
        stack[#stack + 1] = out
        fn(out, interpolate, scope)
        stack[#stack] = nil
        return concat(out)
    end

    return lib
end

------------------------------------------------------------------------------
-- Entry points for lua_vm.c
------------------------------------------------------------------------------

-- Errors of the call itself (no template line to show): plain messages,
-- reported as QJIT_TEMPLATE without a traceback.
local function call_error(fmt, ...)
    error(setmetatable({"TEMPLATE", format(fmt, ...)}, FAIL), 0)
end

-- Runs fn(...) of module `module`; returns its result (a string, or a table
-- that lua_vm.c reads field by field with typed accessors) and the files
-- read as a flat list {name, path, sha256, ...}.
function engine.call(module, fn, ...)
    local st = {sources = {}, modules = {}, templates = {}, files = {}, stack = {}, short = {}}
    state = st
    local lib = make_lib(st)
    local text, path = source(st, module)
    if not text then call_error("%s", path) end
    local m = lib.import(module)
    local f = type(m) == "table" and m[fn] or nil
    if type(f) ~= "function" then
        call_error("module %s has no function %s", module, fn)
    end
    local r = f(...)
    if type(r) ~= "table" and type(r) ~= "string" then
        call_error("%s: %s() returned a %s; expected a string or a table", module, fn, type(r))
    end
    state = nil
    return r, st.files
end

-- An error message with a shortened file name ("...tail:42: msg") restored
-- to the full path of a file the current call read.
function engine.full_message(msg)
    local st = state
    if st and sub(msg, 1, 3) == "..." then
        for short, full in pairs(st.short) do
            if sub(msg, 1, #short + 1) == short .. ":" then
                return full .. sub(msg, #short + 1)
            end
        end
    end
    return msg
end

return engine
