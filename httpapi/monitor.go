package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

func (s *Server) monitorRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/agent/monitor", s.agentMonitor)
}

// monitorFrame is Nomad's stream frame: the log bytes (base64 in JSON).
type monitorFrame struct {
	Data []byte `json:",omitempty"`
}

// agentMonitor serves GET /v1/agent/monitor?log_level=&log_json=&plain=:
// the agent's log lines as they are written, in Nomad's stream frames (raw
// text with ?plain=true), {} when quiet for the heartbeat. Lines a slow
// reader could not take are dropped, and a line says how many.
func (s *Server) agentMonitor(w http.ResponseWriter, r *http.Request) {
	hub := s.opts.Logs
	if hub == nil {
		s.writeError(w, r, codeErr(http.StatusNotFound, "this agent has no log monitor"))
		return
	}
	level, err := monitorLevel(r.URL.Query().Get("log_level"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub := hub.Subscribe(level, boolParam(r, "log_json"))
	defer sub.Close()
	plain := boolParam(r, "plain")
	if plain {
		w.Header().Set("Content-Type", "text/plain")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	write := func(b []byte) error {
		if plain {
			_, err := w.Write(b)
			return err
		}
		return writeJSON(w, monitorFrame{Data: b}, false)
	}
	beat := time.NewTicker(s.opts.StreamHeartbeat)
	defer beat.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-beat.C:
			if !plain {
				_, err = w.Write([]byte("{}\n"))
			}
		case line := <-sub.Lines():
			if n := sub.Dropped(); n > 0 {
				err = write(fmt.Appendf(nil, "[monitor: %d log lines dropped: this reader fell behind]\n", n))
			}
			if err == nil {
				err = write(line)
			}
		}
		if err != nil {
			return
		}
		flush()
	}
}

// monitorLevel reads ?log_level= (Nomad's trace, debug, info, warn,
// error; "" is info).
func monitorLevel(v string) (slog.Level, error) {
	switch strings.ToLower(v) {
	case "trace", "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, codeErr(http.StatusBadRequest, "unknown log_level %q: want trace, debug, info, warn or error", v)
}
