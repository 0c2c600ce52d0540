#!/usr/bin/env bash
# Builds troupe, starts a dev agent (server + client in one process, state in
# a temporary directory, HTTP on 127.0.0.1:4646), runs examples/hello.hcl,
# shows its status and first log lines, and keeps the agent in the
# foreground: Ctrl-C stops the agent and its tasks.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/troupe ./cmd/troupe
export TROUPE_ADDR="${TROUPE_ADDR:-http://127.0.0.1:4646}"

bin/troupe agent -dev -log-level "${LOG_LEVEL:-info}" 2>dev-agent.log &
agent=$!
trap 'kill -INT $agent 2>/dev/null; wait $agent 2>/dev/null' INT TERM EXIT

for _ in $(seq 1 100); do
  bin/troupe node status >/dev/null 2>&1 && [[ -n "$(bin/troupe node status 2>/dev/null | grep ready)" ]] && break
  kill -0 $agent 2>/dev/null || { echo "agent exited; see dev-agent.log" >&2; exit 1; }
  sleep 0.2
done

bin/troupe job run examples/hello.hcl
bin/troupe job status hello
alloc=$(bin/troupe job status -json hello | sed -n 's/.*"ID": *"\([0-9a-f-]\{36\}\)".*/\1/p' | tail -1 || true)
sleep 2
bin/troupe alloc logs "$(bin/troupe job allocs hello 2>/dev/null | awk 'NR==2{print $1}')" 2>/dev/null || true
echo
echo "troupe dev agent is running (logs: dev-agent.log). Try:"
echo "  bin/troupe job status hello    bin/troupe actors    bin/troupe node status"
echo "Ctrl-C stops it."
wait $agent
