package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
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
	a, job, elsewhere, err := s.b.AllocForLogs(allocID)
	if err != nil {
		s.writeError(w, r, codeErr(http.StatusNotFound, "%v", err))
		return
	}
	if elsewhere != "" {
		// The allocation runs on another client: its agent serves the files.
		proxyTo(elsewhere).ServeHTTP(w, r)
		return
	}
	if task == "" {
		task = onlyTask(job, a.GetTaskGroup())
		if task == "" {
			s.writeError(w, r, codeErr(http.StatusBadRequest, "task is required: allocation %q has several tasks", allocID))
			return
		}
	}
	path, err := s.b.TaskLogPath(allocID, task, typ)
	if err != nil {
		s.writeError(w, r, codeErr(http.StatusNotFound, "%v", err))
		return
	}
	f, err := os.Open(path)
	if err != nil {
		s.writeError(w, r, codeErr(http.StatusNotFound, "no %s log for task %q of allocation %q yet", typ, task, allocID))
		return
	}
	defer f.Close()
	offset, _ := strconv.ParseInt(q.Get("offset"), 10, 64)
	if err := seekLog(f, q.Get("origin"), offset); err != nil {
		s.writeError(w, r, codeErr(http.StatusBadRequest, "%v", err))
		return
	}
	plain := boolParam(r, "plain")
	if plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	s.streamLog(w, r, f, path, plain, boolParam(r, "follow"))
}

func seekLog(f *os.File, origin string, offset int64) error {
	if offset < 0 {
		return errors.New("offset must not be negative")
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
	return errors.New(`origin must be "start" or "end"`)
}

func (s *Server) streamLog(w http.ResponseWriter, r *http.Request, f *os.File, path string, plain, follow bool) {
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	buf := make([]byte, 64<<10)
	var tick *time.Ticker
	for {
		n, err := f.Read(buf)
		if n > 0 {
			pos, _ := f.Seek(0, io.SeekCurrent)
			if plain {
				_, err = w.Write(buf[:n])
			} else {
				err = enc.Encode(&api.StreamFrame{Offset: pos, Data: buf[:n], File: path})
			}
			if err != nil {
				return
			}
			continue
		}
		if err != nil && err != io.EOF {
			return
		}
		if !follow {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if tick == nil {
			tick = time.NewTicker(logPoll)
			defer tick.Stop()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// proxyTo forwards a request to another agent's HTTP API.
func proxyTo(addr string) http.Handler {
	return httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr})
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
