-- wrk: POST /oauth/token with a fresh authorization code per request. Codes are "bc-<n>"; each
-- wrk thread walks its own residue class, and each run (BENCH_RUN) its own block of 100,000,
-- so no code is used twice.
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end

function init(args)
  n = tonumber(id) + (tonumber(os.getenv("BENCH_RUN") or "1") - 1) * 100000
  stride = tonumber(os.getenv("BENCH_THREADS") or "2")
  client_id = os.getenv("BENCH_CLIENT_ID")
  verifier = os.getenv("BENCH_VERIFIER")
  redirect = os.getenv("BENCH_REDIRECT")
end

function request()
  local body = "grant_type=authorization_code&code=bc-" .. n .. "&code_verifier=" .. verifier ..
    "&redirect_uri=" .. redirect .. "&client_id=" .. client_id
  n = n + stride
  return wrk.format("POST", "/oauth/token",
    {["Content-Type"] = "application/x-www-form-urlencoded"}, body)
end
