package hostpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ControlRequest is the JSON body of the control API's POST requests.
//
//	POST /v1/fail     {"method","volume_id","code":"Internal","times":3}
//	POST /v1/latency  {"method","latency":"200ms"}   ("" method: all)
//	POST /v1/hang     {"method","volume_id"}
//	POST /v1/release  {"method","volume_id"}
//	POST /v1/race     {"on":true}
//	POST /v1/reset    {}
//	GET  /v1/calls    -> [Call...]
//
// Errors answer 400 with the message as plain text.
type ControlRequest struct {
	Method   string `json:"method,omitempty"`
	VolumeID string `json:"volume_id,omitempty"`
	Code     string `json:"code,omitempty"`
	Times    int    `json:"times,omitempty"`
	Latency  string `json:"latency,omitempty"`
	On       bool   `json:"on,omitempty"`
}

// controlServer serves the control API on a unix socket.
type controlServer struct {
	srv  *http.Server
	done chan struct{}
}

func (c *controlServer) close() {
	_ = c.srv.Close()
	<-c.done
}

// StartControl serves the control API (see ControlRequest) on a unix
// socket until Stop, so that tests in other processes can inject faults
// into a plugin that runs as a job.
func (p *Plugin) StartControl(socketPath string) error {
	p.srvMu.Lock()
	defer p.srvMu.Unlock()
	if p.control != nil {
		return ErrAlreadyStarted
	}
	ln, err := listenUnix(socketPath)
	if err != nil {
		return err
	}
	cs := &controlServer{
		srv:  &http.Server{Handler: p.controlMux(), ReadHeaderTimeout: 5 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(cs.done)
		if err := cs.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("hostpath: control", "err", err)
		}
	}()
	p.control = cs
	return nil
}

func (p *Plugin) controlMux() *http.ServeMux {
	mux := http.NewServeMux()
	post := func(path string, fn func(r *ControlRequest) error) {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, req *http.Request) {
			var r ControlRequest
			if err := json.NewDecoder(req.Body).Decode(&r); err != nil {
				http.Error(w, fmt.Sprintf("bad body: %v", err), http.StatusBadRequest)
				return
			}
			if err := fn(&r); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
	}
	post("/v1/fail", p.controlFail)
	post("/v1/latency", p.controlLatency)
	post("/v1/hang", func(r *ControlRequest) error { return p.Hang(r.Method, r.VolumeID) })
	post("/v1/release", func(r *ControlRequest) error { p.Release(r.Method, r.VolumeID); return nil })
	post("/v1/race", func(r *ControlRequest) error { p.SetRaceMode(r.On); return nil })
	post("/v1/reset", func(*ControlRequest) error { p.ResetFaults(); return nil })
	mux.HandleFunc("GET /v1/calls", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p.Calls())
	})
	return mux
}

func (p *Plugin) controlFail(r *ControlRequest) error {
	code, err := ParseCode(r.Code)
	if err != nil {
		return err
	}
	return p.FailNextVolume(r.Method, r.VolumeID, code, r.Times)
}

func (p *Plugin) controlLatency(r *ControlRequest) error {
	d, err := time.ParseDuration(r.Latency)
	if err != nil {
		return fmt.Errorf("%w: latency: %w", ErrInvalidFault, err)
	}
	return p.SetLatency(r.Method, d)
}
