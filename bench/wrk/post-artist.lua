-- wrk script: every request creates one artist with POST, on rock-legends (/api/v1/artists) or json-server (/artists).
-- Usage: wrk -s bench/wrk/post-artist.lua URL -- API_KEY BODY
-- (json-server ignores the X-API-Key header, so both get the very same request.)

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function init(args)
  if args[1] == nil or args[2] == nil then
    error("pass the API key and the JSON body after --, e.g. -- bench-key '{\"name\":\"Bench Artist\"}'")
  end
  wrk.headers["X-API-Key"] = args[1]
  wrk.body = args[2]
end
