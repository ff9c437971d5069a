#!/usr/bin/env bash
# bash bench/log-floor.sh [ROUNDS] [SECONDS]: where the access log's cost goes, by elimination. Builds one executable
# from a copy of this tree whose access log (src/http/request-log.ts, `logged`) takes a variant from the environment
# variable LOG_FLOOR, then runs it in each variant and with --log off, all servers loaded at once (one `wrk -t1 -c32`
# each on GET one artist, so that they share whatever else the machine does), and prints, per variant, the median over
# the rounds of --log off's CPU per request over its own (/proc), with each round's value. The variants:
#   full        the access log as it is
#   no-line     the id read or made, and set on the answer; no entry, no line
#   no-read     no-line, without reading the client's X-Request-Id (always a new UUIDv7)
#   const-id    no-read, with one constant id instead of a new one (the header is still set on each answer)
#   hooks-only  the hooks and the start time alone: no id, no header, no line
# The copy (and its build) is removed afterwards; this tree is not touched.
set -euo pipefail
rounds=${1:-12}
seconds=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/rl-log-floor-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cp -r "$root/src" "$root/package.json" "$root/tsconfig.json" "$work/"
mkdir "$work/data"
cp "$root/data/legends.json" "$work/data/"
ln -s "$root/node_modules" "$work/node_modules"
# The variant, read once at start; `logged` returns early according to it.
python3 - "$work/src/http/request-log.ts" <<'EOF'
import sys
path = sys.argv[1]
s = open(path).read()
e = '''  const logged = (request: Request, route: string | undefined, response: unknown, set: LoggedSet) => {
'''
f = '''  const floor = process.env.LOG_FLOOR ?? 'full'
  const logged = (request: Request, route: string | undefined, response: unknown, set: LoggedSet) => {
'''
a = '''    const requestId = requestIdOf(request)
'''
b = '''    if (floor === 'hooks-only') return
    const requestId =
      floor === 'const-id' ? '019ab3c4-5d6e-7f01-9a2b-3c4d5e6f7a8b' : floor === 'no-read' ? Bun.randomUUIDv7() : requestIdOf(request)
'''
c = '''    else set.headers[REQUEST_ID] = requestId
'''
d = '''    else set.headers[REQUEST_ID] = requestId
    if (floor !== 'full') return
'''
assert s.count(a) == 1 and s.count(c) == 1 and s.count(e) == 1, 'src/http/request-log.ts changed: update bench/log-floor.sh'
open(path, 'w').write(s.replace(e, f).replace(a, b).replace(c, d))
EOF
# As `bun run build` builds dist/rock-legends.
(cd "$work" && bun build src/main.ts --compile --format esm --splitting --bytecode --minify-syntax --minify-whitespace \
  --no-compile-autoload-dotenv --no-compile-autoload-bunfig --outfile "$work/rock-legends" >/dev/null)
variants=(full no-line no-read const-id hooks-only off)
declare -A port
i=0
for v in "${variants[@]}"; do
  port[$v]=$((4810 + i))
  i=$((i + 1))
  if [ "$v" = off ]; then args=(--log off); else args=(); fi
  LOG_FLOOR=$v "$work/rock-legends" --port "${port[$v]}" --data :memory: --seed "${args[@]}" >/dev/null 2>"$work/$v.log" &
  pids+=($!)
done
declare -A pid
for j in "${!variants[@]}"; do pid[${variants[$j]}]=${pids[$j]}; done
sleep 2
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
for v in "${variants[@]}"; do wrk -t1 -c32 -d1s "http://127.0.0.1:${port[$v]}/api/v1/artists/5" >/dev/null; done
load=$(cut -d' ' -f1 /proc/loadavg)
: >"$work/runs"
for r in $(seq "$rounds"); do
  declare -A before
  jobs=()
  for v in "${variants[@]}"; do
    before[$v]=$(cpu "${pid[$v]}")
    wrk -t1 -c32 -d"${seconds}s" "http://127.0.0.1:${port[$v]}/api/v1/artists/5" >"$work/$v.wrk" 2>/dev/null &
    jobs+=($!)
  done
  wait "${jobs[@]}"
  for v in "${variants[@]}"; do
    n=$(awk '/requests in/ {print $1}' "$work/$v.wrk")
    echo "$v $r $(awk -v a="${before[$v]}" -v b="$(cpu "${pid[$v]}")" -v n="$n" 'BEGIN {printf "%.3f", (b - a) * 1e4 / n}')" >>"$work/runs"
  done
done
echo "bench/log-floor.sh $rounds $seconds, $(date -u '+%Y-%m-%d %H:%M') UTC, Bun $(bun --version); load average $load before, $(cut -d' ' -f1 /proc/loadavg) after"
python3 - "$work/runs" <<'EOF'
import collections, statistics, sys
cpu = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    variant, round_, micros = line.split()
    cpu[variant][round_] = float(micros)
for variant in ['full', 'no-line', 'no-read', 'const-id', 'hooks-only']:
    ratios = [cpu['off'][r] / cpu[variant][r] for r in cpu[variant]]
    each = ', '.join(f'{x:.2f}' for x in ratios)
    print(f'{variant:10} {statistics.median(cpu[variant].values()):6.2f} µs/request; --log off over it: {statistics.median(ratios):.2f}× ({each})')
print(f"off        {statistics.median(cpu['off'].values()):6.2f} µs/request")
EOF
