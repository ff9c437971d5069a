-- wrk script: every request creates one artist with POST /api/v1/artists.
-- Usage: wrk -s bench/wrk/post-artist.lua http://127.0.0.1:PORT/api/v1/artists -- API_KEY

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"name":"Bench Artist","band":"Bench Band",'
  .. '"description":"An artist created by bun run bench to measure durable writes."}'

function init(args)
  if args[1] == nil then
    error("pass the API key after --, e.g. -- bench-key")
  end
  wrk.headers["X-API-Key"] = args[1]
end
