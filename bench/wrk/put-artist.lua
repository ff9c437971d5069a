-- wrk script: every request replaces a random existing artist with PUT /api/v1/artists/{id}, a durable write that
-- leaves the number of artists as it is.
-- Usage: wrk -s bench/wrk/put-artist.lua http://127.0.0.1:PORT -- API_KEY ARTISTS BODY   (ids 1 to ARTISTS exist)

local headers = { ["Content-Type"] = "application/json" }
local artists
local body

function init(args)
  if args[3] == nil then
    error("pass the API key, the number of artists and the JSON body after --")
  end
  headers["X-API-Key"] = args[1]
  artists = tonumber(args[2])
  body = args[3]
end

function request()
  return wrk.format("PUT", "/api/v1/artists/" .. math.random(1, artists), headers, body)
end
