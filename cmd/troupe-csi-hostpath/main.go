package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
	"google.golang.org/grpc/codes"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

// options are the parsed flags.
type options struct {
	cfg      hostpath.Config
	endpoint string
	control  string
	fails    []fault
	latency  time.Duration
	race     bool
}

// fault is one -fail flag.
type fault struct {
	method, volumeID string
	code             codes.Code
	times            int
}

// run serves until ctx ends and returns the exit code.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	opts, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "troupe-csi-hostpath:", err)
		return 2
	}
	opts.cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	if err := serve(ctx, opts); err != nil {
		fmt.Fprintln(stderr, "troupe-csi-hostpath:", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, opts *options) error {
	p, err := hostpath.New(opts.cfg)
	if err != nil {
		return err
	}
	for _, f := range opts.fails {
		if err := p.FailNextVolume(f.method, f.volumeID, f.code, f.times); err != nil {
			return err
		}
	}
	if err := p.SetLatency("", opts.latency); err != nil {
		return err
	}
	p.SetRaceMode(opts.race)
	if opts.control != "" {
		if err := p.StartControl(opts.control); err != nil {
			return err
		}
	}
	defer p.Stop()
	return p.Serve(ctx, opts.endpoint)
}

func parseArgs(args []string, stderr io.Writer) (*options, error) {
	opts := &options{}
	fs := flag.NewFlagSet("troupe-csi-hostpath", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.endpoint, "endpoint", "unix:///csi/csi.sock", "CSI endpoint (unix socket)")
	fs.StringVar(&opts.cfg.Root, "root", "/var/lib/troupe-csi-hostpath", "directory that holds the volumes")
	fs.StringVar(&opts.cfg.NodeID, "node-id", "", "node ID reported by NodeGetInfo")
	mode := fs.String("mode", string(hostpath.ModeMonolith), "monolith, controller or node")
	fs.StringVar(&opts.cfg.Name, "name", hostpath.DefaultName, "plugin name")
	fs.Int64Var(&opts.cfg.MaxVolumesPerNode, "max-volumes", 0, "max volumes per node (0: no limit)")
	fs.BoolVar(&opts.cfg.UnpublishUnknownOK, "unpublish-unknown-ok", false,
		"ControllerUnpublish of an unknown volume succeeds instead of NotFound (for csi-sanity)")
	fs.BoolVar(&opts.cfg.Symlinks, "symlinks", false, "publish with symlinks even as root")
	fs.StringVar(&opts.control, "control", "", "unix socket for the fault control API")
	fs.DurationVar(&opts.latency, "latency", 0, "latency added to every RPC")
	fs.BoolVar(&opts.race, "race", false, "fail concurrent ControllerPublish/Unpublish (device-name race)")
	fs.Func("topology", "key=value[,key=value...]: this node's accessible topology (NodeGetInfo), also the "+
		"topology of volumes created without accessibility requirements", func(s string) error {
		t, err := parseTopology(s)
		opts.cfg.Topology = t
		return err
	})
	fs.Func("fail", "Method[/volume]=Code:N: fail the next N calls (repeatable)", func(s string) error {
		f, err := parseFault(s)
		opts.fails = append(opts.fails, f)
		return err
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	opts.cfg.Mode = hostpath.Mode(*mode)
	return opts, nil
}

// parseFault reads "Method[/volume]=Code:N".
func parseFault(s string) (fault, error) {
	target, spec, ok := strings.Cut(s, "=")
	codeName, n, ok2 := strings.Cut(spec, ":")
	if !ok || !ok2 {
		return fault{}, fmt.Errorf("fault %q: want Method[/volume]=Code:N", s)
	}
	method, volumeID, _ := strings.Cut(target, "/")
	code, err := hostpath.ParseCode(codeName)
	if err != nil {
		return fault{}, err
	}
	times, err := strconv.Atoi(n)
	if err != nil {
		return fault{}, fmt.Errorf("fault %q: count: %w", s, err)
	}
	return fault{method: method, volumeID: volumeID, code: code, times: times}, nil
}

// parseTopology reads "key=value[,key=value...]" (say "zone=a,rack=r1").
func parseTopology(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, seg := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(seg, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("topology %q: segment %q: want key=value", s, seg)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("topology %q: key %q is given twice", s, k)
		}
		out[k] = v
	}
	return out, nil
}
