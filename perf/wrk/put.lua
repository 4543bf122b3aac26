-- PUT of a random key (KEYS, SKEW) with a VALUE_BYTES body; ACK/FROM optional. See lib/kvorum.lua.
package.path = debug.getinfo(1, "S").source:match("^@?(.-)[^/]*$") .. "lib/?.lua;" .. package.path
local kv = require("kvorum")

kv.install {
  request = function()
    return wrk.format("PUT", kv.path(kv.next_key()), nil, kv.value)
  end,
}
