-- GETs (a READ_RATIO share, default 0.5) and PUTs of random keys (KEYS, SKEW, VALUE_BYTES); ACK/FROM
-- optional. See lib/kvorum.lua.
package.path = debug.getinfo(1, "S").source:match("^@?(.-)[^/]*$") .. "lib/?.lua;" .. package.path
local kv = require("kvorum")
local read_ratio

kv.install {
  init = function()
    read_ratio = kv.env_number("READ_RATIO", 0.5)
    if read_ratio < 0 or read_ratio > 1 then error("READ_RATIO must be within 0..1, not " .. read_ratio) end
  end,
  request = function()
    local path = kv.path(kv.next_key())
    if math.random() < read_ratio then
      return wrk.format("GET", path)
    end
    return wrk.format("PUT", path, nil, kv.value)
  end,
}
