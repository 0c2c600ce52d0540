package httpapi

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// Compress gzips h's answers of 1 KiB or more for a client that accepts
// gzip (Accept-Encoding), as Nomad's HTTP API does: a job's ten thousand
// allocations go over the wire as about a tenth of their JSON. Streams
// (the event stream, the agent monitor, a task's logs and files, exec)
// are served as they are, so that each line reaches the reader when it is
// written and the headers before the first one.
func Compress(h http.Handler) http.Handler {
	return compressor(h)
}

var compressor = func() func(http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(gzhttp.DefaultMinSize), gzhttp.EnableZstd(false))
	if err != nil {
		panic(err) // the options are constants: they are valid
	}
	return func(h http.Handler) http.Handler {
		gz := wrap(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if streams(r.URL.Path) {
				h.ServeHTTP(w, r)
				return
			}
			gz.ServeHTTP(w, r)
		})
	}
}()

// streams reports whether path answers with a stream.
func streams(path string) bool {
	return path == "/v1/event/stream" || path == "/v1/agent/monitor" ||
		strings.HasPrefix(path, "/v1/client/fs/") || strings.HasSuffix(path, "/exec")
}
