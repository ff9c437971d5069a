-- Every request in the namespace named by the first argument (bench/fixtures.ts).
function init(args)
  wrk.headers["Rock-Legends-Namespace"] = args[1]
end
