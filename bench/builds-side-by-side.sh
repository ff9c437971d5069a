#!/usr/bin/env bash
# bench/builds-side-by-side.sh PATH ROUNDS BINARY…: quick A/B of executables built from different trees. Each binary runs
# in its default configuration (pretty access log into a file), the first one also with --log off; wrk -t2 -c32 -d2s
# on PATH, the servers taking turns for ROUNDS rounds. Prints mean req/s and server CPU µs per request (/proc).
# Example: bash bench/builds-side-by-side.sh /api/v1/artists/5 6 /tmp/base/rock-legends dist/rock-legends
path=$1; rounds=$2; shift 2
declare -A pid; ports=()
i=0; for b in "$@"; do p=$((4610+i)); "$b" --port $p --data :memory: --seed 2>/dev/null >/dev/null & pid[$p]=$!; ports+=($p); i=$((i+1)); done
"$1" --port 4699 --data :memory: --seed --log off >/dev/null 2>&1 & pid[4699]=$!; ports+=(4699)
sleep 2
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
tck=$(getconf CLK_TCK)
for r in $(seq $rounds); do
  for p in "${ports[@]}"; do
    c0=$(cpu ${pid[$p]}); out=$(wrk -t2 -c32 -d2s http://127.0.0.1:$p$path 2>/dev/null); c1=$(cpu ${pid[$p]})
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}'); n=$(echo "$out" | awk '/requests in/ {print $1}')
    echo "$p $rps $(awk -v a=$c0 -v b=$c1 -v n=$n -v t=$tck 'BEGIN {printf "%.2f", (b-a)/t*1e6/n}')"
  done
done | awk '{s[$1]+=$2; c[$1]+=$3; n[$1]++} END {for (p in s) printf "%s rps %.0f cpu/req %.2f us\n", p, s[p]/n[p], c[p]/n[p]}' | sort
for p in "${ports[@]}"; do kill ${pid[$p]}; done; wait 2>/dev/null
