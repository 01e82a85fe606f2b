/**
 * The server-side scripts of the shared log (Lua, run atomically by Redis or Valkey). Numbers are
 * written with `%d`: Lua 5.1 would print a large number as `1e+15`.
 */

/**
 * Opens a stream's log. KEYS: meta, log. ARGV: a new epoch, pageElements, the epoch the caller
 * knows ('' for none), the newest sequence number the caller has read, the caller's base URL
 * (kept at creation: every instance of a stream must mint the same IRIs).
 *
 * Creates the log when its meta hash is missing (a new server, a flush, an eviction: Centrifugo's
 * rule), deleting any stream left without it, so that a stale id can never match a new element.
 * Also starts a new life when the caller has read elements the server no longer has under the
 * same epoch (a server restarted from an append-only file that missed its last second): numbers
 * already delivered must never name other elements. Returns {epoch, seq, pageElements, created}.
 */
export const OPEN_SCRIPT = `
local epoch = redis.call('HGET', KEYS[1], 'epoch')
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if (not epoch) or (ARGV[3] ~= '' and epoch == ARGV[3] and seq < tonumber(ARGV[4])) then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'seq', 0, 'pageElements', ARGV[2], 'baseUrl', ARGV[5])
  return {ARGV[1], '0', ARGV[2], '1', ARGV[5]}
end
return {epoch, string.format('%d', seq), redis.call('HGET', KEYS[1], 'pageElements'), '0', redis.call('HGET', KEYS[1], 'baseUrl') or ARGV[5]}
`;

/**
 * Appends one element. KEYS: meta, log, lease, idempotency key (any key of the stream when the
 * request has none). ARGV: 1 the epoch and 2 the sequence number the element was rendered for,
 * 3 a new epoch (used only if the log is gone), 4 the source lease's token ('' for ingest),
 * 5 the Idempotency-Key's fingerprint ('' for none), 6 the key's time to live (ms), 7 the record,
 * 8 retainedElements, 9 pageElements (a log created now), 10 generatedAt (ms), 11 the base URL.
 *
 * In this order: fencing (a source's former lease holder can never append), the ingest request's
 * idempotency key (a retry on any instance finds its element), the expected number (the element's
 * IRI carries it: rendered for another number, it is refused and rendered again), then the entry
 * with the explicit id `<seq>-0`, and retention by whole pages (as the file log). Replies
 * {'ok', epoch, seq} | {'conflict', epoch, seq} | {'fenced'} | {'duplicate', 'epoch seq generatedAt fingerprint'}.
 */
export const APPEND_SCRIPT = `
if ARGV[4] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[4] then
  return {'fenced'}
end
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'epoch', ARGV[3], 'seq', 0, 'pageElements', ARGV[9], 'baseUrl', ARGV[11])
  return {'conflict', ARGV[3], '0'}
end
if ARGV[5] ~= '' then
  local held = redis.call('GET', KEYS[4])
  if held then return {'duplicate', held} end
end
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq'))
if epoch ~= ARGV[1] or seq + 1 ~= tonumber(ARGV[2]) then
  return {'conflict', epoch, string.format('%d', seq)}
end
seq = seq + 1
redis.call('HSET', KEYS[1], 'seq', seq)
redis.call('XADD', KEYS[2], string.format('%d-0', seq), 'r', ARGV[7])
if ARGV[5] ~= '' then
  redis.call('SET', KEYS[4], epoch .. ' ' .. string.format('%d', seq) .. ' ' .. ARGV[10] .. ' ' .. ARGV[5], 'PX', ARGV[6])
end
local page = tonumber(redis.call('HGET', KEYS[1], 'pageElements'))
local wanted = seq - tonumber(ARGV[8]) + 1
if wanted > 1 then
  redis.call('XTRIM', KEYS[2], 'MINID', string.format('%d-0', math.floor((wanted - 1) / page) * page + 1))
end
return {'ok', epoch, string.format('%d', seq)}
`;
