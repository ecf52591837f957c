#!/usr/bin/env bash
# `mcprt call` cost against the number of configured servers (SPEC §18: "call starts only
# the tool's server"): the wall time of `mcprt call mcp_demo_echo` with one configured
# server and with N (the demo server plus N-1 others), rounds alternating so load drifts
# hit both alike, and the time from the result on stdout to the exit (the servers' shutdown).
#
#   tests/bench/bench_call.sh [BUILD_DIR] [N] [ROUNDS]     (defaults: build/native 12 10)
#
# Prints the median and range of each, and the N/1 ratio. --no-cache, so every run is cold.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/native}"
n="${2:-12}"
rounds="${3:-10}"
mcprt="$build/platform-native/cli/mcprt"
[[ -x "$mcprt" ]] || mcprt="$(find "$build" -name mcprt -type f -perm -u+x | head -1)"
server="$(find "$build" -name mcprt-demo-server -type f -perm -u+x | head -1)"
[[ -x "$mcprt" && -x "$server" ]] || { echo "bench_call: build mcprt and mcprt-demo-server in $build first" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

make_config() {  # count → config file path
  local count=$1 file="$work/config-$1.json"
  {
    printf '{"mcpServers":{"demo":{"command":"%s"}' "$server"
    for ((i = 1; i < count; i++)); do
      # A distinct env per entry: identical endpoints would be deduplicated (SPEC §2.3).
      printf ',"other%02d":{"command":"%s","env":{"MCPRT_BENCH_SLOT":"%s"}}' "$i" "$server" "$i"
    done
    echo '}}'
  } >"$file"
  echo "$file"
}

one=$(make_config 1)
many=$(make_config "$n")
python3 - "$mcprt" "$one" "$many" "$n" "$rounds" <<'EOF'
import os, statistics, subprocess, sys, time
mcprt, one, many, n, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

def call(config):  # (wall ms, ms from the result to the exit)
    start = time.monotonic()
    p = subprocess.Popen([mcprt, "--no-cache", "--config", config, "call", "mcp_demo_echo", '{"message":"x"}'],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    out, last = b"", None
    while True:
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        out, last = out + chunk, time.monotonic()
    p.wait()
    end = time.monotonic()
    if out != b"x\n" or p.returncode != 0:
        sys.exit("bench_call: unexpected result %r (exit %d)" % (out, p.returncode))
    return (end - start) * 1000, (end - last) * 1000

times = {1: [], n: []}
for _ in range(rounds):
    for count, config in ((1, one), (n, many)):
        times[count].append(call(config))

def show(label, values):
    v = sorted(values)
    print("%-26s median %6.0f ms   min %6.0f   max %6.0f" % (label, statistics.median(v), v[0], v[-1]))
    return statistics.median(v)

w1 = show("call, 1 server: wall", [t[0] for t in times[1]])
wn = show("call, %d servers: wall" % n, [t[0] for t in times[n]])
show("call, 1 server: exit", [t[1] for t in times[1]])
show("call, %d servers: exit" % n, [t[1] for t in times[n]])
print("%d servers / 1 server: %.2fx (wall, %d rounds)" % (n, wn / w1, rounds))
EOF
