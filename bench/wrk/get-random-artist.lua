-- wrk script: every request reads one artist, its id drawn uniformly from 1 to N, so that no two requests in a row
-- need ask for the same one. Usage: wrk -s bench/wrk/get-random-artist.lua URL -- N
-- (URL's path is ignored; requests go to /api/v1/artists/{id}.)

local artists = 1000

function init(args)
  if args[1] ~= nil then artists = tonumber(args[1]) end
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end

function request()
  return wrk.format("GET", "/api/v1/artists/" .. math.random(1, artists))
end
