package clientsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/api"
)

// ServerConfig says how to start the server agent.
type ServerConfig struct {
	// Exe is the troupe binary and Args its leading arguments
	// (["agent"]); the server flags follow them.
	Exe  string
	Args []string
	Env  []string // added to the environment
	// DataDir is the agent's data dir; "" makes a temporary one that Stop
	// removes. The agent's log goes to agent.log in it unless LogFile.
	DataDir, LogFile string
	// The heartbeat settings (-heartbeat-ttl, -heartbeat-grace,
	// -max-heartbeats-per-second); zero keeps the agent's defaults.
	MinTTL, Grace          time.Duration
	MaxHeartbeatsPerSecond float64
	// CPUProfile, when set, is passed as -cpuprofile.
	CPUProfile string
	// Extra flags, appended last.
	Extra []string
	// StartTimeout bounds the wait for a leader (0 = 1 min).
	StartTimeout time.Duration
}

// defaultGrace is the agent's default -heartbeat-grace (Nomad's).
const defaultGrace = 10 * time.Second

// Server is a running server agent: a child process on loopback.
type Server struct {
	cmd               *exec.Cmd
	done              chan struct{}
	waitErr           error
	RPCAddr, HTTPAddr string
	API               *api.Client
	// Grace is the agent's heartbeat grace (its default when not set).
	Grace     time.Duration
	dataDir   string
	removeDir bool
	log       *os.File
}

// StartServer starts `troupe agent -server` on loopback with free ports
// and waits until it leads. A port found free can be taken by another
// process before the agent binds it: an agent that exits on "address
// already in use" is started again on new ports, three tries in all.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	for try := 1; ; try++ {
		s, err := startServer(ctx, cfg)
		if err == nil || try == 3 || !strings.Contains(err.Error(), "address already in use") {
			return s, err
		}
	}
}

func startServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.Exe == "" {
		return nil, fmt.Errorf("%w: no agent binary", ErrConfig)
	}
	s := &Server{dataDir: cfg.DataDir, done: make(chan struct{}), Grace: orDefault(cfg.Grace, defaultGrace)}
	if s.dataDir == "" {
		d, err := os.MkdirTemp("", "troupe-clientsim-")
		if err != nil {
			return nil, err
		}
		s.dataDir, s.removeDir = d, true
	}
	ports, err := freePorts(4)
	if err != nil {
		s.cleanup()
		return nil, err
	}
	s.RPCAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	s.HTTPAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[3]))
	logFile := cfg.LogFile
	if logFile == "" {
		logFile = filepath.Join(s.dataDir, "agent.log")
	}
	if s.log, err = os.Create(logFile); err != nil {
		s.cleanup()
		return nil, err
	}
	s.cmd = exec.Command(cfg.Exe, append(append(append([]string{}, cfg.Args...), serverFlags(cfg, s, ports)...), cfg.Extra...)...)
	s.cmd.Env = append(os.Environ(), cfg.Env...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		s.cleanup()
		return nil, fmt.Errorf("%w: start %s: %w", ErrServer, cfg.Exe, err)
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.done) }()
	if s.API, err = api.NewClient(&api.Config{Address: s.HTTPAddr}); err == nil {
		err = s.waitLeader(ctx, orDefault(cfg.StartTimeout, time.Minute))
	}
	if err != nil {
		log := tail(logFile, 2048)
		_ = s.Stop()
		return nil, fmt.Errorf("%w; the agent's log ends:\n%s", err, log)
	}
	return s, nil
}

func serverFlags(cfg ServerConfig, s *Server, ports []int) []string {
	args := []string{"-server", "-bind", "127.0.0.1", "-bootstrap-expect", "1", "-data-dir", s.dataDir,
		"-rpc-port", strconv.Itoa(ports[0]), "-gossip-port", strconv.Itoa(ports[1]),
		"-raft-port", strconv.Itoa(ports[2]), "-wan-port", "0", "-http-addr", s.HTTPAddr, "-log-level", "warn"}
	if cfg.MinTTL > 0 {
		args = append(args, "-heartbeat-ttl", cfg.MinTTL.String())
	}
	if cfg.Grace > 0 {
		args = append(args, "-heartbeat-grace", cfg.Grace.String())
	}
	if cfg.MaxHeartbeatsPerSecond > 0 {
		args = append(args, "-max-heartbeats-per-second", strconv.FormatFloat(cfg.MaxHeartbeatsPerSecond, 'g', -1, 64))
	}
	if cfg.CPUProfile != "" {
		args = append(args, "-cpuprofile", cfg.CPUProfile)
	}
	return args
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// waitLeader polls /v1/status/leader until the agent names a leader.
func (s *Server) waitLeader(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if l, err := s.API.Status().Leader(); err == nil && l != "" {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("%w: exited before it led: %v", ErrServer, s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("%w: no leader after %s", ErrTimeout, limit)
		case <-tick.C:
		}
	}
}

// PID is the agent's process ID.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// CPU is the CPU time the agent has used so far.
func (s *Server) CPU() (time.Duration, error) { return ProcessCPU(s.PID()) }

// RaftIndex is the leader's last raft log index (from /v1/agent/self).
func (s *Server) RaftIndex() (uint64, error) {
	self, err := s.API.Agent().Self()
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(self.Stats["raft"]["last_log_index"], 10, 64)
}

// Stop ends the agent (SIGTERM, then SIGKILL after 30 s) and removes a
// temporary data dir.
func (s *Server) Stop() error {
	var err error
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			err = fmt.Errorf("%w: killed after 30 s without a clean shutdown", ErrServer)
		}
		var ee *exec.ExitError
		if s.waitErr != nil && !errors.As(s.waitErr, &ee) {
			err = errors.Join(err, s.waitErr)
		}
	}
	s.cleanup()
	return err
}

func (s *Server) cleanup() {
	if s.log != nil {
		s.log.Close()
	}
	if s.removeDir {
		os.RemoveAll(s.dataDir)
	}
}

// freePorts finds n free TCP ports on loopback (free when asked: the
// agent binds them a moment later).
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// tail returns up to the last n bytes of a file.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, 0)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
