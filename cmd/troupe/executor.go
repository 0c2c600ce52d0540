package main

import "github.com/troupe-dev/troupe/runtime/driver/exec"

// executorCommand runs the hidden `troupe executor` subcommand: the exec
// driver's supervisor of one task, which outlives agent restarts.
func executorCommand(args []string) int { return exec.ExecutorMain(args) }
