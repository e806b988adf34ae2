-- bench/compare's wrk script: one figure of one side. bench/peer/drive.mjs sets the environment:
--   WRK_FIGURE       refresh | refused | code | authorize | jwks | metadata
--   WRK_PATH         the document's path (jwks, metadata) or the token endpoint (refresh,
--                    refused, code)
--   WRK_THREADS      wrk's -t
--   WRK_DELAY_MS     think time of a connection before each request (0: as fast as answered);
--                    drive.mjs derives it from the rate it wants (the run at 80 % of the peak)
--   WRK_CHAINS       refresh: a file of fresh refresh tokens, one a line, shared out among the
--                    threads; each answer's new token goes back to its thread's queue
--   WRK_REFRESH_BODY refresh: the form body without the token (it is appended); refused: the
--                    whole body, whose refresh token no server can open
--   WRK_AUTHORIZE    code: the signed-in GET /authorize path and query
--   WRK_COOKIE       code: the session cookie
--   WRK_EXCHANGE_BODY code: the exchange's form body without the code (it is appended)
-- A code flow is the authorize (a redirect with a code) followed, on whichever connection comes
-- next, by the exchange of that code. `authorize` is the code flow's first half alone (its codes
-- are never exchanged): with `code`, it splits a flow's cost between its two requests. done()
-- prints one line "WRK_RESULT ok bad starved".
local figure = os.getenv("WRK_FIGURE")
local path = os.getenv("WRK_PATH")
local nthreads = tonumber(os.getenv("WRK_THREADS"))
local think = tonumber(os.getenv("WRK_DELAY_MS") or "0")
local form = { ["Content-Type"] = "application/x-www-form-urlencoded" }

local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("index", #threads)
end

-- A FIFO of strings (tokens or codes).
local function fifo() return { first = 1, last = 0, items = {} } end
local function push(q, v) q.last = q.last + 1; q.items[q.last] = v end
local function pop(q)
  if q.first > q.last then return nil end
  local v = q.items[q.first]
  q.items[q.first] = nil
  q.first = q.first + 1
  return v
end

function init(args)
  ok, bad, starved = 0, 0, 0
  pending = fifo()
  if figure == "refresh" then
    local i = 0
    for line in io.lines(os.getenv("WRK_CHAINS")) do
      if line ~= "" and i % nthreads == index - 1 then push(pending, line) end
      i = i + 1
    end
    refresh_body = os.getenv("WRK_REFRESH_BODY")
  elseif figure == "refused" then
    refused_body = os.getenv("WRK_REFRESH_BODY")
  elseif figure == "code" or figure == "authorize" then
    authorize = os.getenv("WRK_AUTHORIZE")
    cookie = { Cookie = os.getenv("WRK_COOKIE") }
    exchange_body = os.getenv("WRK_EXCHANGE_BODY")
  end
end

function request()
  if figure == "refresh" then
    local token = pop(pending)
    if not token then
      starved = starved + 1
      token = "none"
    end
    return wrk.format("POST", path, form, refresh_body .. "&refresh_token=" .. token)
  elseif figure == "refused" then
    return wrk.format("POST", path, form, refused_body)
  elseif figure == "code" then
    local code = pop(pending)
    if code then return wrk.format("POST", path, form, exchange_body .. "&code=" .. code) end
    return wrk.format("GET", authorize, cookie)
  elseif figure == "authorize" then
    return wrk.format("GET", authorize, cookie)
  end
  return wrk.format("GET", path)
end

if think > 0 then
  function delay() return think end
end

function response(status, headers, body)
  if figure == "refresh" then
    local token = status == 200 and body:match('"refresh_token"%s*:%s*"([^"]+)"')
    if token then ok = ok + 1; push(pending, token) else bad = bad + 1 end
  elseif figure == "refused" then
    if status == 400 and body:match('"invalid_grant"') then ok = ok + 1 else bad = bad + 1 end
  elseif figure == "code" then
    if status >= 300 and status < 400 then
      local location = headers["Location"] or headers["location"] or ""
      local code = location:match("[?&]code=([^&]+)")
      if code then push(pending, code) else bad = bad + 1 end
    elseif status == 200 then
      ok = ok + 1
    else
      bad = bad + 1
    end
  elseif figure == "authorize" then
    local location = headers["Location"] or headers["location"] or ""
    if status >= 300 and status < 400 and location:match("[?&]code=") then ok = ok + 1 else bad = bad + 1 end
  elseif status == 200 then
    ok = ok + 1
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local ok_all, bad_all, starved_all = 0, 0, 0
  for _, thread in ipairs(threads) do
    ok_all = ok_all + thread:get("ok")
    bad_all = bad_all + thread:get("bad")
    starved_all = starved_all + thread:get("starved")
  end
  io.write(string.format("WRK_RESULT %d %d %d\n", ok_all, bad_all, starved_all))
end
