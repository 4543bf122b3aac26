-- GET of a random key (KEYS, SKEW); ACK/FROM optional. Preload the keys first. See lib/kvorum.lua.
package.path = debug.getinfo(1, "S").source:match("^@?(.-)[^/]*$") .. "lib/?.lua;" .. package.path
local kv = require("kvorum")

kv.install {
  request = function()
    return wrk.format("GET", kv.path(kv.next_key()))
  end,
}
