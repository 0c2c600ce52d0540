package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	_ "time/tzdata" // periodic jobs' time_zone on hosts without zone files (minimal images)
)

// version is the build's version; set with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// getenv and nowFunc are how commands read the environment and the clock;
// tests replace them.
var (
	getenv  = os.Getenv
	nowFunc = time.Now
)

// command is one CLI command: it parses args, writes to stdout and
// stderr, and returns the exit code.
type command func(args []string, stdout, stderr io.Writer) int

// cmdNode is a command or a group of subcommands.
type cmdNode struct {
	synopsis string
	run      command
	subs     map[string]*cmdNode
	hidden   bool
}

// withoutIO adapts the commands that write to the process's own streams.
func withoutIO(f func([]string) int) command {
	return func(args []string, _, _ io.Writer) int { return f(args) }
}

// commandTree is the whole CLI.
func commandTree() *cmdNode {
	return &cmdNode{subs: map[string]*cmdNode{
		"agent":    {synopsis: "Run a troupe agent (server and/or client)", run: withoutIO(agentCommand)},
		"executor": {run: withoutIO(executorCommand), hidden: true},
		"logmon":   {run: withoutIO(logmonCommand), hidden: true},
		"bench":    {synopsis: "Run the built-in benchmarks", run: withoutIO(benchCommand)},
		"version":  {synopsis: "Print the troupe version", run: versionCommand},
		"actors":   {synopsis: "Print the live actor tree of a node", run: actorsCommand},
		"monitor":  {synopsis: "Stream the agent's log lines", run: monitorCommand},
		"ui":       {synopsis: "Print the web UI's URL and open it in a browser", run: uiCommand},
		"job": {synopsis: "Submit, inspect and stop jobs", subs: map[string]*cmdNode{
			"run":      {synopsis: "Submit a job file and watch it start", run: jobRunCommand},
			"plan":     {synopsis: "Show what submitting a job file would change (a dry run)", run: jobPlanCommand},
			"scale":    {synopsis: "Set a task group's count", run: jobScaleCommand},
			"history":  {synopsis: "List a job's stored versions (-p: with their diffs)", run: jobHistoryCommand},
			"revert":   {synopsis: "Register a stored version of a job again", run: jobRevertCommand},
			"status":   {synopsis: "List jobs or show one job", run: jobStatusCommand},
			"stop":     {synopsis: "Stop a running job", run: jobStopCommand},
			"inspect":  {synopsis: "Print a job as JSON", run: jobInspectCommand},
			"dispatch": {synopsis: "Run a parameterized job with a payload and meta", run: jobDispatchCommand},
			"promote":  {synopsis: "Promote the canaries of a job's deployment", run: jobPromoteCommand},
			"periodic": {synopsis: "Act on periodic jobs", subs: map[string]*cmdNode{
				"force": {synopsis: "Launch a periodic job's child now", run: jobPeriodicForceCommand},
			}},
		}},
		"alloc": {synopsis: "Inspect allocations", subs: map[string]*cmdNode{
			"status":  {synopsis: "Show an allocation", run: allocStatusCommand},
			"logs":    {synopsis: "Stream a task's logs", run: allocLogsCommand},
			"exec":    {synopsis: "Run a command in a running task", run: allocExecCommand},
			"fs":      {synopsis: "List or read an allocation's files", run: allocFSCommand},
			"stop":    {synopsis: "Stop (and reschedule) an allocation", run: allocStopCommand},
			"signal":  {synopsis: "Send a signal to an allocation's tasks", run: allocSignalCommand},
			"restart": {synopsis: "Restart an allocation's tasks in place", run: allocRestartCommand},
		}},
		"node": {synopsis: "Inspect and manage client nodes", subs: map[string]*cmdNode{
			"status":      {synopsis: "List nodes or show one node", run: nodeStatusCommand},
			"eligibility": {synopsis: "Toggle a node's scheduling eligibility", run: nodeEligibilityCommand},
			"drain":       {synopsis: "Drain a node's allocations (or stop draining)", run: nodeDrainCommand},
			"pool":        nodePoolCommands(),
		}},
		"acl":        aclCommands(),
		"namespace":  namespaceCommands(),
		"deployment": deploymentCommands(),
		"service":    serviceCommands(),
		"volume": {synopsis: "Create, register, inspect, detach and remove CSI volumes", subs: map[string]*cmdNode{
			"create":     {synopsis: "Create a volume with its CSI plugin from a spec file", run: volumeCreateCommand},
			"register":   {synopsis: "Register an existing volume from a spec file", run: volumeRegisterCommand},
			"status":     {synopsis: "List volumes or show one volume and its claims", run: volumeStatusCommand},
			"detach":     {synopsis: "Release a volume's claims on a node", run: volumeDetachCommand},
			"delete":     {synopsis: "Delete a volume in its storage provider and deregister it", run: volumeDeleteCommand},
			"deregister": {synopsis: "Remove a volume from troupe, leaving the storage volume", run: volumeDeregisterCommand},
		}},
		"plugin": {synopsis: "Inspect CSI plugins", subs: map[string]*cmdNode{
			"status": {synopsis: "List plugins or show one plugin's instances", run: pluginStatusCommand},
		}},
		"var": varCommands(),
		"tls": tlsCommands(),
		"eval": {synopsis: "Inspect evaluations", subs: map[string]*cmdNode{
			"status": {synopsis: "Show an evaluation", run: evalStatusCommand},
		}},
		"event": {synopsis: "Follow the cluster's events", subs: map[string]*cmdNode{
			"stream": {synopsis: "Print the event stream", run: eventStreamCommand},
		}},
		"system": {synopsis: "System maintenance", subs: map[string]*cmdNode{
			"gc": {synopsis: "Run the garbage collector now", run: systemGCCommand},
		}},
		"server": {synopsis: "Inspect servers", subs: map[string]*cmdNode{
			"members": {synopsis: "List the server members", run: serverMembersCommand},
			"join":    {synopsis: "Join the servers of other regions (WAN pool)", run: serverJoinCommand},
		}},
		"operator": {synopsis: "Cluster operator commands", subs: map[string]*cmdNode{
			"raft": {synopsis: "Raft commands", subs: map[string]*cmdNode{
				"list-peers":  {synopsis: "List the raft peers", run: raftListPeersCommand},
				"remove-peer": {synopsis: "Remove a server from raft", run: raftRemovePeerCommand},
			}},
			"scheduler": {synopsis: "Scheduler configuration commands", subs: map[string]*cmdNode{
				"get-config": {synopsis: "Display the scheduler configuration", run: schedulerGetConfigCommand},
				"set-config": {synopsis: "Modify the scheduler configuration", run: schedulerSetConfigCommand},
			}},
			"gossip": {synopsis: "Gossip encryption commands", subs: map[string]*cmdNode{
				"keyring": {synopsis: "Make (-generate), list, install, use and remove gossip encryption keys", run: gossipKeyringCommand},
			}},
			"root": {synopsis: "Root key commands", subs: map[string]*cmdNode{
				"keyring": {synopsis: "Variables' root keyring", subs: map[string]*cmdNode{
					"rotate": {synopsis: "Make a new active root key", run: keyringRotateCommand},
				}},
			}},
		}},
	}}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches `troupe <cmd> [<sub>...] [flags] args`.
func run(args []string, stdout, stderr io.Writer) int {
	node, path := commandTree(), []string{"troupe"}
	for len(args) > 0 {
		sub, ok := node.subs[args[0]]
		if !ok {
			break
		}
		node, path, args = sub, append(path, args[0]), args[1:]
	}
	if node.run != nil {
		return node.run(args, stdout, stderr)
	}
	if len(args) > 0 && !isHelp(args[0]) {
		fmt.Fprintf(stderr, "Error: unknown command %q for %q\n\n", args[0], strings.Join(path, " "))
		printUsage(stderr, node, path)
		return 1
	}
	if len(args) > 0 {
		printUsage(stdout, node, path)
		return 0
	}
	printUsage(stderr, node, path)
	return 1
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// printUsage lists the subcommands of node.
func printUsage(w io.Writer, node *cmdNode, path []string) {
	fmt.Fprintf(w, "Usage: %s <command> [flags] [args]\n\nCommands:\n", strings.Join(path, " "))
	names := make([]string, 0, len(node.subs))
	for name, sub := range node.subs {
		if !sub.hidden {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, name := range names {
		fmt.Fprintf(tw, "    %s\t%s\n", name, node.subs[name].synopsis)
	}
	_ = tw.Flush()
}

// versionCommand prints the version.
func versionCommand(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintf(stdout, "troupe v%s\n", version)
	return 0
}
