"""The Lua scripts of the Redis projection store (projections/redis_store.py): each runs
atomically in Redis, over keys of one generation's hash tag."""

COMMIT = """
local p = cjson.decode(ARGV[1])
local cp = redis.call('HMGET', KEYS[1], 'tx', 'pos')
if not cp[1] then return -1 end
if cp[1] ~= p[1] or cp[2] ~= p[2] then return 0 end
redis.call('HSET', KEYS[1], 'tx', p[3], 'pos', p[4])
local versions = p[5]
for i = 1, #versions, 2 do redis.call('HSET', KEYS[2], versions[i], versions[i + 1]) end
for _, op in ipairs(p[6]) do
  local kind, key = op[1], KEYS[op[2]]
  if kind == 'S' then redis.call('SET', key, ARGV[op[3]])
  elseif kind == 'A' then redis.call('ZADD', key, op[3], op[4])
  elseif kind == 'D' then redis.call('DEL', key)
  elseif kind == 'H' then redis.call('HINCRBY', key, op[3], op[4])
  elseif kind == 'R' then redis.call('ZREM', key, op[3])
  else return redis.error_reply('unknown op ' .. tostring(kind)) end
end
return 1
"""
"""Apply a batch: KEYS are the meta key, the streams hash, then every key the batch writes
(each once); ARGV[1] is one JSON array: the start and end checkpoints, the stream versions,
and the operations, each naming its key by its index in KEYS; ARGV[2..] are the documents'
JSON, each named by its index in ARGV (passed as they are: not escaped into ARGV[1] and
parsed out again by the script). Numbers travel as strings, so no score or counter passes
through Lua's doubles."""

SWITCH = """
local current = redis.call('GET', KEYS[1])
if (current or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""

MARK = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'error', ARGV[2])
return 1
"""
