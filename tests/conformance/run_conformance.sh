#!/usr/bin/env bash
# run_conformance.sh <client-binary> <scenario | --suite=NAME> <results-dir>
# Runs the official MCP conformance suite against mcprt's conformance client inside a
# loopback-only network namespace (its scenario servers listen on all interfaces).
set -euo pipefail
client="$1" what="$2" out="$3"
here="$(cd "$(dirname "$0")" && pwd)"
root="${MCPRT_SOURCE_DIR:-$(cd "${here}/../.." && pwd)}"
bin="${root}/node_modules/.bin/conformance"
if [[ ! -x "${bin}" ]]; then
  echo "run_conformance: ${bin} is missing: run scripts/bootstrap (npm packages)" >&2
  exit 1
fi
mkdir -p "${out}"
if [[ "${what}" == --suite=* ]]; then
  args=(--suite "${what#--suite=}" --expected-failures "${here}/expected-failures.yml")
else
  args=(--scenario "${what}")
fi
# The command string is split by the suite; quote nothing fancy in the path.
exec unshare -n bash -c 'ip link set lo up && exec "$0" client --command "$1" -o "$2" "${@:3}"' \
  "${bin}" "${client}" "${out}" "${args[@]}"
