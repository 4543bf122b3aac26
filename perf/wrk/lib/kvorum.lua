-- Shared by put.lua, get.lua, mixed.lua and delete.lua (wrk2 or wrk; LuaJIT). Each script does
--   local kv = dofile-free require of this module (see the scripts' first lines), then
--   kv.install{ request = function() ... end }   which defines wrk's setup/init/request/response/done.
--
-- Environment (read once per wrk thread, in init):
--   KEYS         key space: keys are key0 .. key{KEYS-1}                    (default 100000)
--   VALUE_BYTES  body size of PUTs                                          (default 256)
--   ACK, FROM    appended as &ack=A / &from=F, each only when set
--   SKEW         0 = uniform keys; otherwise the Zipfian theta (YCSB uses 0.99) (default 0)
--   READ_RATIO   share of GETs in mixed.lua, 0..1                           (default 0.5)
--   KVORUM_TOKEN_FILE  a file whose first line is a bearer token (a write one: the load writes), sent with every request
--                (./kvorum perf --token sets it; the token itself never appears in a command line)
--
-- Answers: every status is counted per thread in response(); done() sums the threads and prints one
-- line that tools parse, e.g. "kvorum-status 201=123456 503=12" (statuses in ascending order).
local M = {}

local function env_number(name, default)
  local v = os.getenv(name)
  if v == nil or v == "" then return default end
  local n = tonumber(v)
  if n == nil then error(name .. " must be a number, not '" .. v .. "'") end
  return n
end

function M.query()
  local q = ""
  local ack, from = os.getenv("ACK"), os.getenv("FROM")
  if ack and ack ~= "" then q = q .. "&ack=" .. ack end
  if from and from ~= "" then q = q .. "&from=" .. from end
  return q
end

-- Zipfian ranks 0..n-1 (0 most popular), as YCSB's ZipfianGenerator (Gray et al., "Quickly
-- generating billion-record synthetic databases"): zeta(n) is summed once, O(n), then each sample is
-- O(1). Ranks are then scattered over the key space by a bijection rank -> (rank * p + c) mod n with
-- p prime and not dividing n, so the hot keys are not key0, key1, ... (YCSB's ScrambledZipfian
-- hashes instead; a bijection keeps every key reachable and the hot set exactly as Zipf makes it).
function M.zipfian(n, theta)
  local zetan = 0
  for i = 1, n do zetan = zetan + 1 / (i ^ theta) end
  local zeta2 = 1 + 1 / (2 ^ theta)
  local alpha = 1 / (1 - theta)
  local eta = (1 - (2 / n) ^ (1 - theta)) / (1 - zeta2 / zetan)
  local half_pow_theta = 1 + 0.5 ^ theta
  local primes = { 1000003, 999983, 999979, 7919 }
  local p = 1
  for _, candidate in ipairs(primes) do
    if n % candidate ~= 0 then p = candidate; break end
  end
  local c = math.floor(n / 3)
  return function()
    local u = math.random()
    local uz = u * zetan
    local rank
    if uz < 1 then rank = 0
    elseif uz < half_pow_theta then rank = 1
    else rank = math.floor(n * (eta * u - eta + 1) ^ alpha) end
    if rank >= n then rank = n - 1 end
    return (rank * p + c) % n
  end
end

-- A function returning the next key index in 0..KEYS-1, uniform or Zipfian per SKEW.
function M.key_chooser()
  local keys = env_number("KEYS", 100000)
  local skew = env_number("SKEW", 0)
  if skew <= 0 then
    return function() return math.random(0, keys - 1) end
  end
  if skew >= 1 then error("SKEW must be below 1 (a Zipfian theta such as 0.99), not " .. skew) end
  return M.zipfian(keys, skew)
end

M.env_number = env_number

-- Sends the bearer token of KVORUM_TOKEN_FILE, if set, with every request wrk.format builds.
function M.authorize()
  local path = os.getenv("KVORUM_TOKEN_FILE")
  if path == nil or path == "" then return end
  local f = io.open(path, "r")
  if f == nil then error("KVORUM_TOKEN_FILE names a file that cannot be read: " .. path) end
  local token = f:read("*l")
  f:close()
  if token == nil or token == "" then error("KVORUM_TOKEN_FILE holds no token: " .. path) end
  wrk.headers["Authorization"] = "Bearer " .. token
end

local threads = {}

-- Defines wrk's callbacks. spec.init(): per-thread set-up after the common one; spec.request(): the
-- next request, built with wrk.format.
function M.install(spec)
  function setup(thread)
    table.insert(threads, thread)
  end

  function init(args)
    math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
    seen_statuses = ""
    M.next_key = M.key_chooser()
    M.query_suffix = M.query()
    M.value = string.rep("v", env_number("VALUE_BYTES", 256))
    M.authorize()
    if spec.init then spec.init() end
  end

  request = spec.request

  -- wrk's thread:get copies a table with its keys and values mixed up, so each status count is a
  -- global number "status_201" of the thread, and "seen_statuses" ("201,503") lists them.
  local counter_names = {}
  function response(status, headers, body)
    local name = counter_names[status]
    if name == nil then
      name = "status_" .. status
      counter_names[status] = name
      _G[name] = 0
      seen_statuses = seen_statuses .. "," .. status
    end
    _G[name] = _G[name] + 1
  end

  function done(summary, latency, requests)
    local total = {}
    for _, thread in ipairs(threads) do
      for status in string.gmatch(thread:get("seen_statuses") or "", "%d+") do
        local n = thread:get("status_" .. status)
        status = tonumber(status)
        total[status] = (total[status] or 0) + n
      end
    end
    local sorted = {}
    for status in pairs(total) do table.insert(sorted, status) end
    table.sort(sorted)
    local parts = {}
    for _, status in ipairs(sorted) do table.insert(parts, status .. "=" .. total[status]) end
    io.write("kvorum-status " .. table.concat(parts, " ") .. "\n")
  end
end

function M.path(key_index)
  return "/v0/entity?id=key" .. key_index .. M.query_suffix
end

return M
