-- wrk: POST /oauth/token with grant_type=refresh_token. Every refresh rotates the token, so each
-- thread keeps a queue of live tokens: a response puts its new token back, a request takes one.
-- Tokens "brt-<suffix>-<run>-<n>" are seeded (one set per run: a finished run leaves its chains rotated);
-- thread k starts with every token n where n % threads == k - 1.
-- BENCH_DELAY_MS paces each connection (bench/soak runs below the peak rate with it).
local counter = 0
local delay_ms = tonumber(os.getenv("BENCH_DELAY_MS") or "0")
if delay_ms > 0 then
  function delay()
    return delay_ms
  end
end

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
end

function init(args)
  local threads = tonumber(os.getenv("BENCH_THREADS") or "2")
  local chains = tonumber(os.getenv("BENCH_CHAINS") or "64")
  client_id = os.getenv("BENCH_CLIENT_ID")
  local run = os.getenv("BENCH_RUN") or "1"
  queue = {}
  for i = 1, chains do
    if (i - 1) % threads == tonumber(id) - 1 then table.insert(queue, "brt-" .. os.getenv("BENCH_SUFFIX") .. "-" .. run .. "-" .. i) end
  end
end

function request()
  local token = table.remove(queue, 1)
  if token == nil then token = "exhausted" end
  return wrk.format("POST", "/oauth/token",
    {["Content-Type"] = "application/x-www-form-urlencoded"},
    "grant_type=refresh_token&refresh_token=" .. token .. "&client_id=" .. client_id)
end

function response(status, headers, body)
  local next_token = body:match('"refresh_token":"([^"]+)"')
  if next_token then table.insert(queue, next_token) end
end
