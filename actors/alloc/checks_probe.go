package alloc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/troupe-dev/troupe/runtime/clientstate"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// checkSpec is one check of one service of the allocation, resolved: its
// address, and for a script check the task it runs in.
type checkSpec struct {
	ID, Name, Service, Group, Task string
	Type                           string // http | tcp | script
	Address                        string
	Port                           int
	Path, Method, Protocol, Body   string
	Header                         map[string][]string
	TLSSkipVerify                  bool
	Command                        string
	Args                           []string
	Interval, Timeout              time.Duration
	Limit                          int
	Grace                          time.Duration
	IgnoreWarnings                 bool
}

// scriptRunner runs a script check's command in its task: exit code and
// output.
type scriptRunner func(ctx context.Context, task string, cmd []string) (int, string, error)

// maxCheckOutput bounds what a check's output keeps.
const maxCheckOutput = 4 << 10

// probe runs one check once, within its timeout.
func probe(ctx context.Context, c *checkSpec, script scriptRunner, now func() time.Time) checkOutcome {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var o checkOutcome
	switch c.Type {
	case "http":
		o = probeHTTP(ctx, c)
	case "tcp":
		o = probeTCP(ctx, c)
	case "script":
		o = probeScript(ctx, c, script)
	default:
		o = checkOutcome{result: probeCritical, output: fmt.Sprintf("unknown check type %q", c.Type)}
	}
	o.at = now()
	if len(o.output) > maxCheckOutput {
		o.output = o.output[:maxCheckOutput]
	}
	return o
}

// probeHTTP: a 2xx passes, a 429 warns, anything else (or no answer in
// time) is critical, as Nomad's checks have it.
func probeHTTP(ctx context.Context, c *checkSpec) checkOutcome {
	proto := c.Protocol
	if proto == "" {
		proto = "http"
	}
	url := fmt.Sprintf("%s://%s%s", proto, net.JoinHostPort(c.Address, strconv.Itoa(c.Port)), c.Path)
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(c.Body))
	if err != nil {
		return checkOutcome{result: probeCritical, output: err.Error()}
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	tr := &http.Transport{DisableKeepAlives: true}
	if c.TLSSkipVerify {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the job asked for it
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return checkOutcome{result: probeCritical, output: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxCheckOutput))
	out := fmt.Sprintf("HTTP %s %s: %s Output: %s", method, url, resp.Status, bytes.TrimSpace(body))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return checkOutcome{result: probePassing, output: out, code: resp.StatusCode}
	case resp.StatusCode == http.StatusTooManyRequests:
		return checkOutcome{result: probeWarning, output: out, code: resp.StatusCode}
	}
	return checkOutcome{result: probeCritical, output: out, code: resp.StatusCode}
}

// probeTCP passes when a connection opens.
func probeTCP(ctx context.Context, c *checkSpec) checkOutcome {
	addr := net.JoinHostPort(c.Address, strconv.Itoa(c.Port))
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return checkOutcome{result: probeCritical, output: err.Error()}
	}
	_ = conn.Close()
	return checkOutcome{result: probePassing, output: "TCP connect " + addr + ": Success"}
}

// probeScript: exit 0 passes, 1 warns, anything else (or the timeout) is
// critical.
func probeScript(ctx context.Context, c *checkSpec, run scriptRunner) checkOutcome {
	code, out, err := run(ctx, c.Task, append([]string{c.Command}, c.Args...))
	switch {
	case ctx.Err() != nil:
		return checkOutcome{result: probeCritical, output: "script check timed out: " + out}
	case err != nil:
		return checkOutcome{result: probeCritical, output: err.Error()}
	case code == 0:
		return checkOutcome{result: probePassing, output: out}
	case code == 1:
		return checkOutcome{result: probeWarning, output: out}
	}
	return checkOutcome{result: probeCritical, output: out}
}

// execScript runs cmd in the task through its driver when the driver can
// (driver.Execer); for one that cannot, as a process in the task's
// directory. The task's driver and ID come from its stored handle.
func (a *Actor) execScript(root, allocID string) scriptRunner {
	drivers, db := a.spec.Drivers, a.spec.DB
	return func(ctx context.Context, task string, cmd []string) (int, string, error) {
		var d driver.Driver
		var id string
		if h, ok := storedHandle(db, allocID, task); ok {
			d, id = drivers[h.Driver], h.TaskID
		}
		return runIn(ctx, d, id, TaskDir(root, allocID, task), cmd, maxCheckOutput)
	}
}

// runIn runs cmd inside task id through driver d when it can exec (d nil:
// none known), else as a process in dir: its exit code and the first limit
// bytes of its output.
func runIn(ctx context.Context, d driver.Driver, id, dir string, cmd []string, limit int) (int, string, error) {
	var out bytes.Buffer
	w := &limitWriter{w: &out, n: limit}
	if d != nil {
		code, err := driver.ExecIn(ctx, d, id, &driver.ExecOptions{Command: cmd, Stdout: w, Stderr: w})
		if !errors.Is(err, driver.ErrExecNotSupported) {
			return code, out.String(), err
		}
	}
	p := exec.CommandContext(ctx, cmd[0], cmd[1:]...) //nolint:gosec // the job's own command
	p.Dir = dir
	p.Stdout, p.Stderr = w, w
	ownGroup(p)
	err := p.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), nil
	}
	if err != nil {
		return -1, out.String(), err
	}
	return 0, out.String(), nil
}

// limitWriter keeps the first n bytes and drops the rest; stdout and
// stderr may write at once.
type limitWriter struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// storedHandle is a task's stored driver handle, when it has one.
func storedHandle(db *clientstate.DB, allocID, task string) (*driver.TaskHandle, bool) {
	if db == nil {
		return nil, false
	}
	raw, err := db.TaskHandle(allocID, task)
	if err != nil || len(raw) == 0 {
		return nil, false
	}
	var h driver.TaskHandle
	if json.Unmarshal(raw, &h) != nil {
		return nil, false
	}
	return &h, true
}
