#!/usr/bin/env bash
# Instructions per `tools/call` round trip, counted (valgrind's callgrind) for each client of
# mcprt_bench_roundtrip: the count moves by a few tenths of a percent from run to run (how
# often a read finds nothing yet depends on timing), where the round-trip times of a virtual
# machine move by several percent. The client process only (the server it starts is not
# counted); user-space instructions, so the kernel's share (system calls, the loopback's
# TCP) is not in it.
#
#   tests/bench/bench_instructions.sh [BUILD_DIR]     (default: build/native)
#
# Streamable HTTP: mcprt's client against the httplib keep-alive loop and the libcurl easy
# loop (the same bytes to the same demo server). Each client runs twice, with 300 and 1,300
# calls; the difference over 1,000 calls is its count per call (start-up and the set-up
# calls cancel out). Prints each count and mcprt's ratio to each baseline. Needs valgrind
# (apt-get install valgrind; not installed by scripts/bootstrap, which the test suite and
# the demo do not need it for).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/native}"
bench="$build/tests/bench/mcprt_bench_roundtrip"
command -v valgrind >/dev/null || { echo "bench_instructions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
[[ -x "$bench" ]] || { echo "bench_instructions: build mcprt_bench_roundtrip in $build first" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# count NAME ARGS... → instructions per call of that run's client
count() {
  local name=$1; shift
  local n total=()
  for n in 300 1300; do
    valgrind --tool=callgrind --callgrind-out-file="$work/$name.$n.out" \
      "$bench" --calls "$n" --cpu 0 "$@" >"$work/$name.$n.log" 2>&1 ||
      { echo "bench_instructions: $name ($n calls) failed:" >&2; tail -5 "$work/$name.$n.log" >&2; exit 1; }
    total+=("$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/$name.$n.log")")
  done
  echo $(((total[1] - total[0]) / 1000))
}

keep=$(count keep --only http --http-clients keep)
curl=$(count curl --only http --http-clients curl)
mcprt=$(count mcprt --only http --http-clients mcprt)
printf 'Streamable HTTP tools/call, instructions per call (callgrind, client process)\n'
printf '  %-46s %9d\n' "httplib::Client keep-alive loop (baseline)" "$keep" \
  "libcurl easy loop" "$curl" "mcprt ClientSession + NativeHttpClient" "$mcprt"
python3 -c "import sys; k,c,m=map(int,sys.argv[1:]); print(f'  mcprt / httplib loop {m/k:.2f}x, mcprt / libcurl easy loop {m/c:.2f}x')" \
  "$keep" "$curl" "$mcprt"
