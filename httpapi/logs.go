package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/logrotate"
	"github.com/troupe-dev/troupe/runtime/safepath"
)

// logPoll is how often a followed log is checked for new bytes.
var logPoll = 250 * time.Millisecond

// logs streams a task's stdout or stderr: raw bytes with plain=true, else
// Nomad's JSON stream frames. With follow=true it keeps streaming until the
// client goes away.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	allocID, task, typ := r.PathValue("alloc"), q.Get("task"), q.Get("type")
	if typ == "" {
		typ = "stdout"
	}
	if typ != "stdout" && typ != "stderr" {
		s.writeError(w, r, codeErr(http.StatusBadRequest, "invalid type %q: want stdout or stderr", typ))
		return
	}
	a, job, elsewhere, err := s.b.AllocForLogs(allocID)
	if err != nil {
		s.writeError(w, r, codeErr(http.StatusNotFound, "%v", err))
		return
	}
	if elsewhere != "" {
		// The allocation runs on another client: its agent serves the files.
		ProxyTo(elsewhere).ServeHTTP(w, r)
		return
	}
	if task == "" {
		task = onlyTask(job, a.GetTaskGroup())
		if task == "" {
			s.writeError(w, r, codeErr(http.StatusBadRequest, "task is required: allocation %q has several tasks", allocID))
			return
		}
	}
	if !hasTask(job, a.GetTaskGroup(), task) {
		s.writeError(w, r, codeErr(http.StatusNotFound, "unknown task %s in allocation %q", safepath.Quote(task), allocID))
		return
	}
	// base names the log: its rotated files base.0, base.1, ... or, for a
	// driver that writes its own, the one file base (logrotate.Open).
	base, err := s.b.TaskLogPath(allocID, task, typ)
	if err != nil {
		s.writeError(w, r, codeErr(http.StatusNotFound, "%v", err))
		return
	}
	var offset int64
	if o := q.Get("offset"); o != "" {
		if offset, err = strconv.ParseInt(o, 10, 64); err != nil {
			s.writeError(w, r, codeErr(http.StatusBadRequest, "invalid offset %q: %v", o, err))
			return
		}
	}
	origin := q.Get("origin")
	if err := checkOrigin(origin, offset); err != nil {
		s.writeError(w, r, codeErr(http.StatusBadRequest, "%v", err))
		return
	}
	// The backend checked the path; the reader follows no link planted
	// since (the agent reads as root).
	rd, err := logrotate.Open(base, origin == "end", offset)
	if err != nil {
		s.writeError(w, r, codeErr(http.StatusNotFound, "no %s log for task %q of allocation %q yet", typ, task, allocID))
		return
	}
	defer rd.Close()
	plain := boolParam(r, "plain")
	if plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	s.streamLog(w, r, rotatedSource{rd}, plain, boolParam(r, "follow"))
}

func checkOrigin(origin string, offset int64) error {
	if offset < 0 {
		return errors.New("offset must not be negative")
	}
	if origin != "" && origin != "start" && origin != "end" {
		return errors.New(`origin must be "start" or "end"`)
	}
	return nil
}

func seekLog(f *os.File, origin string, offset int64) error {
	if err := checkOrigin(origin, offset); err != nil {
		return err
	}
	switch origin {
	case "", "start":
		_, err := f.Seek(offset, io.SeekStart)
		return err
	case "end":
		st, err := f.Stat()
		if err != nil {
			return err
		}
		_, err = f.Seek(max(st.Size()-offset, 0), io.SeekStart)
		return err
	}
	return nil
}

// logSource is what streamLog copies: a file, or a rotated log.
type logSource interface {
	io.Reader
	// pos is the file the bytes last read came from and the offset after
	// them, for the frame.
	pos() (file string, offset int64)
}

type fileSource struct {
	f    *os.File
	path string
}

func (s fileSource) Read(p []byte) (int, error) { return s.f.Read(p) }

func (s fileSource) pos() (string, int64) {
	off, _ := s.f.Seek(0, io.SeekCurrent)
	return s.path, off
}

type rotatedSource struct{ *logrotate.Reader }

func (s rotatedSource) pos() (string, int64) { return s.File(), s.Offset() }

// streamLog copies src to w: raw bytes with plain, else Nomad's JSON
// frames; with follow it waits for more until the client goes away, and a
// JSON stream quiet for the heartbeat interval gets an empty frame ({}),
// as Nomad's stream framer sends, so that nothing between times it out.
func (s *Server) streamLog(w http.ResponseWriter, r *http.Request, src logSource, plain, follow bool) {
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	enc := json.NewEncoder(w)
	buf := make([]byte, 64<<10)
	var tick, beat *time.Ticker
	var beats <-chan time.Time // nil: no heartbeats (plain, or not following)
	quiet := true              // nothing sent since the last heartbeat tick
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if plain {
				_, err = w.Write(buf[:n])
			} else {
				file, pos := src.pos()
				err = enc.Encode(&api.StreamFrame{Offset: pos, Data: buf[:n], File: file})
			}
			if err != nil {
				return
			}
			quiet = false
			continue
		}
		if err != nil && err != io.EOF {
			return
		}
		if !follow {
			return
		}
		flush()
		if tick == nil {
			tick = time.NewTicker(logPoll)
			defer tick.Stop()
			if !plain {
				beat = time.NewTicker(s.opts.StreamHeartbeat)
				defer beat.Stop()
				beats = beat.C
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		case <-beats:
			if quiet && enc.Encode(&api.StreamFrame{}) != nil {
				return
			}
			quiet = true
			flush()
		}
	}
}

// ProxiedHeader counts how many agents passed a request on, so that a
// misconfigured address cannot make agents pass it around forever.
const ProxiedHeader = "X-Troupe-Hops"

// maxHops is how often a request may be passed on (client -> follower ->
// leader -> the client with the logs).
const maxHops = 3

// ProxyTo forwards a request to another agent's HTTP API, counting hops.
func ProxyTo(addr string) http.Handler { return proxyTo(addr, nil) }

// proxyTo is ProxyTo with a hook that sees the other agent's response
// before it is passed back (nil: none); an error from it is a 502. It
// speaks to the other agent as the request's WithProxyTransport says:
// HTTPS with this agent's certificate when the API is HTTPS.
func proxyTo(addr string, modify func(*http.Response) error) http.Handler {
	return hopCounted(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := reverseProxy(r, addr)
		p.ModifyResponse = modify
		p.ServeHTTP(w, r)
	}))
}

type proxyKey struct{}

type proxyTransport struct {
	scheme string
	rt     http.RoundTripper
}

// WithProxyTransport makes the requests h serves pass on to other agents
// with scheme ("https") through rt (nil: http.DefaultTransport).
func WithProxyTransport(h http.Handler, scheme string, rt http.RoundTripper) http.Handler {
	pt := proxyTransport{scheme: scheme, rt: rt}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), proxyKey{}, pt)))
	})
}

// hopCounted passes r on through p to the agent at addr unless it was
// passed on maxHops times already. It counts the hop on a copy of r, so
// that r can be passed on again (to another leader) if p fails.
func hopCounted(addr string, p http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops, _ := strconv.Atoi(r.Header.Get(ProxiedHeader))
		if hops >= maxHops {
			http.Error(w, fmt.Sprintf("request passed on %d times already; not passing it to %s", hops, addr), http.StatusLoopDetected)
			return
		}
		r = r.Clone(r.Context())
		r.Header.Set(ProxiedHeader, strconv.Itoa(hops+1))
		p.ServeHTTP(w, r)
	})
}

// hasTask reports whether group of job has a task of that name.
func hasTask(j *messages.Job, group, task string) bool {
	for _, g := range j.GetTaskGroups() {
		if g.GetName() != group {
			continue
		}
		for _, t := range g.GetTasks() {
			if t.GetName() == task {
				return true
			}
		}
	}
	return false
}

// onlyTask names the task of a group that has exactly one.
func onlyTask(j *messages.Job, group string) string {
	for _, g := range j.GetTaskGroups() {
		if g.GetName() == group && len(g.GetTasks()) == 1 {
			return g.GetTasks()[0].GetName()
		}
	}
	return ""
}
