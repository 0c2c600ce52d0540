package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/messages"
)

// maxSourceBytes is Nomad's job_max_source_size default ("1M"): a
// submission whose source, variables and -var flags together are larger
// is discarded with a warning, and the job registers without it.
const maxSourceBytes = 1_000_000

// jobSubmission handles GET /v1/job/{id}/submission?version=N: the
// source that version of the job was registered from, in Nomad's
// JobSubmission shape. Without version, the current version's. A version
// that is not stored, or was registered without a source, is Nomad's 404
// "job source not found".
func (s *Server) jobSubmission(w http.ResponseWriter, r *http.Request) (any, error) {
	version, hasVersion := uint64(0), r.URL.Query().Has("version")
	if hasVersion {
		v, err := strconv.ParseUint(r.URL.Query().Get("version"), 10, 64)
		if err != nil {
			return nil, codeErr(http.StatusBadRequest, "Unable to parse job submission version parameter")
		}
		version = v
	}
	return s.query(w, r, jobTables, func(snap *state.Snap) (any, error) {
		ns, id := namespace(r), r.PathValue("id")
		if !hasVersion {
			j := snap.JobByID(ns, id)
			if j == nil {
				return nil, codeErr(http.StatusNotFound, "job not found: %q", id)
			}
			version = j.GetVersion()
		}
		sub := snap.JobSubmission(ns, id, version)
		if sub == nil {
			return nil, codeErr(http.StatusNotFound, "job source not found")
		}
		return sub, nil
	})
}

// keepSubmission answers the submission to store with a registration
// (nil: none) and, when it is over maxSourceBytes, Nomad's warning that
// it is discarded.
func keepSubmission(sub *messages.JobSubmission) (*messages.JobSubmission, string) {
	if sub == nil {
		return nil, ""
	}
	size := len(sub.GetSource()) + len(sub.GetVariables())
	for k, v := range sub.GetVariableFlags() {
		size += len(k) + len(v)
	}
	if size > maxSourceBytes {
		return nil, fmt.Sprintf("job source size of %s exceeds maximum of %s and will be discarded",
			siBytes(size), siBytes(maxSourceBytes))
	}
	return sub, ""
}

// siBytes writes a size as Nomad's messages do: "1.2 MB", "980 kB", "7 B".
func siBytes(n int) string {
	if n < 10 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	e := int(math.Floor(math.Log10(float64(n)) / 3))
	val := math.Floor(float64(n)/math.Pow(1000, float64(e))*10+0.5) / 10
	if val < 10 {
		return fmt.Sprintf("%.1f %s", val, units[e])
	}
	return fmt.Sprintf("%.0f %s", val, units[e])
}
