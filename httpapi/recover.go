package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
)

// recoverPanic answers a request whose handler panicked with a 500 that
// says so and logs the panic with its stack; no input is meant to get
// here (each one found has a test), but one that does must not look like
// a dropped connection. net/http's own abort (ErrAbortHandler) goes on.
func (s *Server) recoverPanic(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
		panic(v)
	}
	s.log.Error("http handler panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, "internal error: troupe failed on %s %s (%v); the agent's log has the details\n", r.Method, r.URL.Path, v)
}
