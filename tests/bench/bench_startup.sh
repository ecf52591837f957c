#!/usr/bin/env bash
# Startup benchmark (SPEC §12 "startup with N stdio servers that each take D ms"):
# `mcprt tools --json` over N copies of the demo server started with --startup-delay-ms D,
# cold (empty tool cache) and warm (second run, cache filled by the first), against a
# baseline measured in the same run: one such server alone, cold.
#
#   tests/bench/bench_startup.sh [BUILD_DIR] [N] [DELAY_MS]     (defaults: build/native 20 2000)
#
# Prints the loader's elapsedMs (time to the tool list) and the wall time of the whole
# command (including shutting the servers down), and the ratios against the baseline.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/native}"
n="${2:-20}"
delay="${3:-2000}"
mcprt="$build/platform-native/cli/mcprt"
[[ -x "$mcprt" ]] || mcprt="$(find "$build" -name mcprt -type f -perm -u+x | head -1)"
server="$(find "$build" -name mcprt-demo-server -type f -perm -u+x | head -1)"
[[ -x "$mcprt" && -x "$server" ]] || { echo "bench_startup: build mcprt and mcprt-demo-server in $build first" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

make_config() {  # count → config file path
  local count=$1 file="$work/config-$1.json"
  {
    echo '{"mcpServers":{'
    for ((i = 0; i < count; i++)); do
      ((i > 0)) && echo ','
      # A distinct env per entry: identical endpoints would be deduplicated (SPEC §2.3).
      printf '"slow%02d":{"command":"%s","args":["--startup-delay-ms","%s"],"env":{"MCPRT_BENCH_SLOT":"%s"}}' \
        "$i" "$server" "$delay" "$i"
    done
    echo '}}'
  } >"$file"
  echo "$file"
}

run() {  # label config cache_dir → "elapsedMs wallMs"
  local config=$2 cache=$3 t0 t1 out
  t0=$(date +%s%N)
  out=$(XDG_CACHE_HOME="$cache" "$mcprt" tools --json --config "$config" 2>/dev/null || true)
  t1=$(date +%s%N)
  local elapsed tools
  elapsed=$(node -e 'const r=JSON.parse(process.argv[1]);console.log(r.elapsedMs)' "$out")
  tools=$(node -e 'const r=JSON.parse(process.argv[1]);console.log(r.tools.length+" tools, "+r.tools.filter(t=>t.deferred).length+" deferred")' "$out")
  printf '%-22s elapsedMs %6s   wall %6s ms   (%s)\n' "$1" "$elapsed" $(((t1 - t0) / 1000000)) "$tools" >&2
  echo "$elapsed $(((t1 - t0) / 1000000))"
}

one=$(make_config 1)
many=$(make_config "$n")
read -r base_e base_w < <(run "baseline: 1 server" "$one" "$work/cache-base")
read -r cold_e cold_w < <(run "cold: $n servers" "$many" "$work/cache-many")
read -r warm_e warm_w < <(run "warm: $n servers" "$many" "$work/cache-many")
node -e '
const [be, bw, ce, cw, we, ww] = process.argv.slice(1).map(Number);
const r = (a, b) => (a / b).toFixed(2);
console.log(`cold/baseline: ${r(ce, be)}x (elapsedMs), ${r(cw, bw)}x (wall)`);
console.log(`warm/baseline: ${r(we, be)}x (elapsedMs), ${r(ww, bw)}x (wall)`);
' "$base_e" "$base_w" "$cold_e" "$cold_w" "$warm_e" "$warm_w"
