package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/troupe-dev/troupe/agent"
)

// gossipKeyringCommand is `troupe operator gossip keyring -generate` (or
// `... keyring generate`, Nomad's newer form): print a new key for
// -encrypt. The live keyring operations are not there yet and say so.
func gossipKeyringCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("troupe operator gossip keyring", flag.ContinueOnError)
	fs.SetOutput(stderr)
	generate := fs.Bool("generate", false, "print a new random gossip encryption key (32 bytes, base64)")
	var live []string
	for _, op := range []string{"list", "install", "use", "remove"} {
		fs.BoolFunc(op, "not supported yet: change -encrypt on every agent and restart them", func(string) error {
			live = append(live, "-"+op)
			return nil
		})
	}
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if len(live) > 0 {
		fmt.Fprintf(stderr, "Error: %s is not supported yet: troupe cannot change a running cluster's gossip keys; set the same -encrypt on every agent and restart them one at a time\n", live[0])
		return 1
	}
	if fs.NArg() == 1 && fs.Arg(0) == "generate" {
		*generate = true
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "Error: unexpected arguments %q\n", fs.Args())
		return 1
	}
	if !*generate {
		fmt.Fprintln(stderr, "Usage: troupe operator gossip keyring -generate")
		return 1
	}
	key, err := agent.NewGossipKey()
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	fmt.Fprintln(stdout, key)
	return 0
}
