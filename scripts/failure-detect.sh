#!/usr/bin/env bash
# Measures failure detection with default settings (heartbeat TTL 10 s and
# grace 10 s, memberlist's LAN gossip timing) in a 3-server + 2-client
# cluster of network namespaces, and prints the median of each figure over
# RUNS runs (default 5), each in a fresh cluster, with the command behind it:
#   crash -> running elsewhere   a client host dies (link, agent, tasks)
#   cut -> task stopped          a client cut off with stop_on_client_after = "10s"
#   cut -> replacement running
# Needs root (network namespaces). One scenario at a time: each run starts
# five agents. Figures from a loaded machine run long; say how loaded.
#   scripts/failure-detect.sh            both scenarios, 5 runs each
#   RUNS=3 scripts/failure-detect.sh crash
set -euo pipefail
cd "$(dirname "$0")/.."
# go-nvml's cgo code calls NVML functions NVIDIA marked deprecated: without
# this, a fresh build prints ~150 lines of C compiler warnings.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
runs="${RUNS:-5}"
declare -A tests=(
	[crash]=TestClusterDetectClientCrash
	[cut]=TestClusterDetectCutStopOnClientAfter
)
scenarios=("$@")
[[ ${#scenarios[@]} -gt 0 ]] || scenarios=(crash cut)

for s in "${scenarios[@]}"; do
	name="${tests[$s]:?unknown scenario $s (crash or cut)}"
	cmd="TROUPE_MEASURE_RUNS=$runs go test ./test/e2e -run '^${name}\$' -count=1 -v -timeout 60m"
	echo "\$ $cmd"
	echo "  load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
	out=$(eval "$cmd" 2>&1) || { echo "$out" | tail -40; exit 1; }
	echo "$out" | grep -E -- '--- (PASS|FAIL): .*/run' | sed 's/^ */  /'
	echo "$out" | sed -n 's/.*MEDIAN /  median /p'
done
