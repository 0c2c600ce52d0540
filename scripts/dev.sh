#!/usr/bin/env bash
# Builds troupe, starts a dev agent (server + client in one process, state in
# a temporary directory, HTTP on 127.0.0.1:4646), runs examples/hello.hcl,
# shows its status and first log lines, and keeps the agent in the
# foreground: Ctrl-C stops the agent and its tasks.
set -euo pipefail
cd "$(dirname "$0")/.."
# go-nvml's cgo code calls NVML functions NVIDIA marked deprecated: without
# this, a fresh build prints ~150 lines of C compiler warnings.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
go build -o bin/troupe ./cmd/troupe
export TROUPE_ADDR="${TROUPE_ADDR:-http://127.0.0.1:4646}"

# Its own session: a Ctrl-C reaches only this script, which then asks the
# agent once to shut down cleanly (a second signal would make it exit at once).
setsid bin/troupe agent -dev -log-level "${LOG_LEVEL:-info}" 2>dev-agent.log &
agent=$!
trap 'kill -INT $agent 2>/dev/null || true; wait $agent 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM

# Wait (at most 30 s) for the agent's node to be ready.
for _ in $(seq 1 150); do
  kill -0 $agent 2>/dev/null || { echo "the agent exited; see dev-agent.log" >&2; exit 1; }
  bin/troupe node status 2>/dev/null | grep -q ' ready$' && break
  sleep 0.2
done

bin/troupe job run examples/hello.hcl
echo
bin/troupe job status hello
alloc=$(bin/troupe job status hello | awk '/^Allocations/ {getline; getline; print $1; exit}')
sleep 3
echo
echo "==> bin/troupe alloc logs $alloc"
bin/troupe alloc logs "$alloc"
echo
echo "The dev agent runs (its log: dev-agent.log). In another shell, try:"
echo "  bin/troupe actors    bin/troupe alloc logs -f $alloc    bin/troupe node status -verbose"
echo "Ctrl-C stops the agent and its tasks."
wait $agent
