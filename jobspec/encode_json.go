package jobspec

import (
	"fmt"

	"github.com/troupe-dev/troupe/messages"
)

// EncodeJSON writes job as a Nomad register body {"Job": {...}} that
// ParseJSON reads back unchanged. It writes with messages.MarshalJSON,
// which keeps the zero values whose absence ParseJSON would fill with a
// default (group Count, the fields of the restart, reschedule, migrate and
// disconnect policies, resources CPU and MemoryMB) and writes integers
// exactly (a SubmitTime in nanoseconds is above 2^53).
func EncodeJSON(job *messages.Job) ([]byte, error) {
	raw, err := messages.MarshalJSON(struct{ Job *messages.Job }{job})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	return raw, nil
}
