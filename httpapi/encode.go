package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/troupe-dev/troupe/messages"
)

// Responses are written with messages.MarshalJSON: as encoding/json writes
// them, except that the bool and number fields of the messages types are
// written even when zero (Nomad's client reads them into pointers) and
// Nomad's few time fields are RFC 3339 times.

// writeJSON writes a response body; indent pretty-prints it.
func writeJSON(w io.Writer, v any, indent bool) error {
	bp := bufPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledBuf {
			bufPool.Put(bp)
		}
	}()
	raw, err := messages.AppendJSON((*bp)[:0], v)
	if err != nil {
		return err
	}
	*bp = raw
	if indent {
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "    "); err != nil {
			return err
		}
		raw = buf.Bytes()
	}
	_, err = w.Write(append(raw, '\n'))
	return err
}

// bufPool keeps response buffers (up to maxPooledBuf) between requests.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledBuf = 4 << 20
