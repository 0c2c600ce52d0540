#!/usr/bin/env bash
# Prints troupe's headline performance figures in one run, each with the
# command behind it. Any change to actors/, cluster/, agent/ or the
# scheduler runs this before it lands and quotes the figures; a drop of
# more than 20%, or a cost per allocation that grows with the state, is a
# regression to fix first.
#   scripts/bench.sh                 everything (about 5 minutes on 2 cores)
#   BENCH_BIG=200000 scripts/bench.sh   a smaller second schedule run
#   BENCH_CLIENTS=0 scripts/bench.sh    without the clients bench
set -euo pipefail
cd "$(dirname "$0")/.."
# go-nvml's cgo code calls NVML functions NVIDIA marked deprecated: without
# this, a fresh build prints ~150 lines of C compiler warnings.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
small="${BENCH_SMALL:-100000}"
big="${BENCH_BIG:-1000000}"

go build -o bin/troupe ./cmd/troupe 2>/dev/null

# schedule N prints the bench's lines and leaves the seconds in $secs.
schedule() {
	local cmd="bin/troupe bench schedule -nodes 10000 -allocs $1"
	echo "\$ $cmd"
	local out
	out=$($cmd 2>/dev/null | grep -E '^(placed|peak)')
	echo "$out" | sed 's/^/  /'
	secs=$(echo "$out" | sed -n 's/.* in \([0-9.]*\)s:.*/\1/p')
}

echo "== Placements committed through raft (10,000 simulated nodes)"
schedule "$small"
t_small=$secs
schedule "$big"
t_big=$secs
awk -v a="$t_small" -v b="$t_big" -v n="$small" -v m="$big" 'BEGIN {
	pa = a / n * 1e6; pb = b / m * 1e6
	printf "  time per allocation: %.1f us at %d, %.1f us at %d: ratio %.2f (goal: at most 1.3)\n", pa, n, pb, m, pb / pa
}'

echo
echo "== Scheduler micro-benchmarks (one evaluation, 10,000 nodes)"
cmd="go test -run ^\$ -bench (Process10kNodes|BareBinPack10kNodes|Process10kNodesLoaded|ProcessInPlace1kAllocs)\$ -benchtime 10x ./actors/scheduler/"
echo "\$ $cmd"
out=$(go test -run '^$' -bench '(Process10kNodes|BareBinPack10kNodes|Process10kNodesLoaded|ProcessInPlace1kAllocs)$' -benchtime 10x ./actors/scheduler/ | grep '^Benchmark')
echo "$out" | sed 's/^/  /'
echo "$out" | awk '$1 ~ /^BenchmarkProcess10kNodes(-[0-9]+)?$/ { p = $3 } $1 ~ /^BenchmarkBareBinPack10kNodes/ { b = $3 }
	END { if (p && b) printf "  Process10kNodes / BareBinPack10kNodes: %.2fx the bare bin-pack loop\n", p / b }'

echo
echo "== Spread: 1,000 placements of one group spread over 25 racks on 10,000 nodes (goal: at least 5,000/s)"
cmd="go test -run ^\$ -bench Spread25Racks10kNodes\$ -benchtime 5x ./actors/scheduler/"
echo "\$ $cmd"
go test -run '^$' -bench 'Spread25Racks10kNodes$' -benchtime 5x ./actors/scheduler/ | grep '^Benchmark' | sed 's/^/  /'

if [ "${BENCH_CLIENTS:-1}" != 0 ]; then
	echo
	echo "== 10,000 clients heartbeating over gRPC to one server agent, then 100 stop at once"
	echo "   (goals on 2 cores: leader under 1 core, heartbeat p99 under 50 ms, all 100 down within TTL + grace;"
	echo "   the budget is 500 heartbeats/s so the TTLs are 20-40 s and a run takes about 2 minutes)"
	cmd="bin/troupe bench clients -n 10000 -stop 100 -max-heartbeats-per-second 500 -min-ttl 10s -grace 5s -duration 30s"
	echo "\$ $cmd"
	$cmd 2>&1 | grep -E '^(summary|Error)' | sed 's/^/  /'
fi
