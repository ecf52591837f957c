#!/usr/bin/env bash
# Era probe benchmark (SPEC §14): what `protocol: "auto"` costs on a cold start and that a
# warm start (the era verdict stored in the tool cache) sends no probe. `mcprt tools --json`
# over N demo servers, for each case the median of R runs of the loader's elapsedMs (time to
# the tool list), against a baseline measured in the same run: the same servers pinned to
# their wire (`protocol: "legacy"` / `"2026-07-28"`: no probe) with no cache.
#
#   tests/bench/bench_probe.sh [BUILD_DIR] [N] [ROUNDS]     (defaults: build/native 20 5)
#
# Cases: a 2025 server (the probe is answered -32601, then initialize), a 2026-07-28 server
# (server/discover is the probe), and a 2025 server that ignores requests before initialize
# (the probe waits out its 2 s deadline). Each: pinned (baseline), auto cold (no cache),
# auto warm (the cache from the cold run). The request counts come from the servers' own
# --log-requests lines.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/native}"
n="${2:-20}"
rounds="${3:-5}"
mcprt="$build/platform-native/cli/mcprt"
[[ -x "$mcprt" ]] || mcprt="$(find "$build" -name mcprt -type f -perm -u+x | head -1)"
server="$(find "$build" -name mcprt-demo-server -type f -perm -u+x | head -1)"
[[ -x "$mcprt" && -x "$server" ]] || { echo "bench_probe: build mcprt and mcprt-demo-server in $build first" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

make_config() {  # name protocol server-args... → config file path
  local name=$1 protocol=$2 file="$work/$1-$2.json"
  shift 2
  local args=""
  for a in "$@"; do args+=",\"$a\""; done
  {
    echo '{"mcpServers":{'
    for ((i = 0; i < n; i++)); do
      ((i > 0)) && echo ','
      printf '"s%02d":{"command":"/bin/sh","args":["-c","exec %s --log-requests%s 2>>%s/%s.log"],"protocol":"%s","env":{"MCPRT_BENCH_SLOT":"%s"}}' \
        "$i" "$server" "$(printf ' %s' "$@")" "$work" "$name" "$protocol" "$i"
    done
    echo '}}'
  } >"$file"
  echo "$file"
}

elapsed() {  # config cache_dir → elapsedMs
  local out
  out=$(XDG_CACHE_HOME="$2" "$mcprt" tools --json --config "$1" 2>/dev/null || true)
  node -e 'const r=JSON.parse(process.argv[1]);const bad=r.servers.filter(s=>s.status!=="connected"&&s.status!=="connecting");if(r.errors.length||bad.length){console.error("bench_probe: "+JSON.stringify(r.errors.concat(bad.map(s=>s.name+": "+s.status+" "+s.error))));process.exit(3)}console.log(r.elapsedMs)' "$out"
}

median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bench_case() {  # label name pinned-protocol server-args...
  local label=$1 name=$2 pinned=$3
  shift 3
  local pinned_cfg auto_cfg base=() cold=() warm=()
  pinned_cfg=$(make_config "$name" "$pinned" "$@")
  auto_cfg=$(make_config "$name" auto "$@")
  for ((r = 0; r < rounds; r++)); do
    base+=("$(elapsed "$pinned_cfg" "$work/nocache-$r")")
    rm -rf "$work/nocache-$r"
    : >"$work/$name.log"
    cold+=("$(elapsed "$auto_cfg" "$work/cache-$name-$r")")
    local cold_probes
    cold_probes=$(grep -c 'request server/discover' "$work/$name.log" || true)
    : >"$work/$name.log"
    warm+=("$(elapsed "$auto_cfg" "$work/cache-$name-$r")")
    local warm_probes
    warm_probes=$(grep -c 'request server/discover' "$work/$name.log" || true)
  done
  local b c w
  b=$(echo "${base[*]}" | median)
  c=$(echo "${cold[*]}" | median)
  w=$(echo "${warm[*]}" | median)
  node -e '
const [label, b, c, w, cp, wp, n] = process.argv.slice(1);
const r = (x) => (Number(x) / Number(b)).toFixed(2);
console.log(`${label.padEnd(34)} pinned ${b.padStart(5)} ms | auto cold ${c.padStart(5)} ms (${r(c)}x, ${cp}/${n} probed) | auto warm ${w.padStart(5)} ms (${r(w)}x, ${wp}/${n} probed)`);
' "$label" "$b" "$c" "$w" "$cold_probes" "$warm_probes" "$n"
}

echo "bench_probe: $n servers per case, median of $rounds runs (elapsedMs to the tool list)"
bench_case "2025 server (answers the probe)" legacy legacy
bench_case "2026-07-28 server" modern 2026-07-28 --protocol 2026
bench_case "2025 server ignoring early requests" silent legacy --ignore-early-requests
