package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/agent"
)

// agentCommand runs `troupe agent`: the cluster daemon.
func agentCommand(args []string) int {
	return runAgent(args, os.Stderr)
}

func runAgent(args []string, stderr io.Writer) int {
	cfg := agent.DefaultConfig()
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&cfg.Dev, "dev", false, "run a server and a client in one process with state in a temporary directory")
	server := fs.Bool("server", false, "run a server")
	client := fs.Bool("client", false, "run a client")
	fs.StringVar(&cfg.DataDir, "data-dir", "", "directory for raft, the client state and allocation directories")
	fs.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "address of the HTTP API")
	fs.StringVar(&cfg.NodeName, "node", "", "node name (default: the hostname)")
	fs.StringVar(&cfg.Datacenter, "dc", cfg.Datacenter, "datacenter")
	fs.StringVar(&cfg.Region, "region", cfg.Region, "region")
	fs.StringVar(&cfg.NodeClass, "node-class", "", "node class")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	jsonLogs := fs.Bool("log-json", false, "log as JSON")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if *server || *client {
		cfg.Server, cfg.Client = *server, *client
	}
	logger, err := newLogger(stderr, *level, *jsonLogs)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	cfg.Logger = logger
	if exe, err := os.Executable(); err == nil {
		cfg.ExecutorPath = exe
	}
	a, err := agent.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "Error starting agent:", err)
		return 1
	}
	if err := a.Start(); err != nil {
		fmt.Fprintln(stderr, "Error starting agent:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := a.WaitLeader(ctx); err != nil {
		logger.Warn("no raft leader yet", "error", err)
	}
	cancel()
	logger.Info("troupe agent started", "http", a.HTTPAddr(), "data_dir", a.DataDir(), "dev", cfg.Dev)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	sig := <-sigs
	logger.Info("shutting down", "signal", sig.String())
	if err := a.Shutdown(); err != nil {
		logger.Warn("shutdown", "error", err)
	}
	return 0
}

func newLogger(w io.Writer, level string, asJSON bool) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("invalid -log-level %q", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	if asJSON {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}
