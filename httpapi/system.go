package httpapi

import (
	"net/http"

	"github.com/troupe-dev/troupe/actors/server"
)

// systemGC handles PUT /v1/system/gc on the leader (a follower passes it
// on): a forced collection, every threshold zero as in Nomad's, answered
// once each batch it purged is committed through raft. Jobs are trimmed
// to the versions the store keeps (job_tracked_versions).
func (s *Server) systemGC(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.writeToLeader(w, r) {
		return nil, errProxied
	}
	now := s.b.Now()
	st := s.b.Store()
	_, err := server.CollectGarbage(r.Context(), s.b, st.Snapshot(), server.GCConfig{}.Cutoffs(now, true), st.JobVersions(), now)
	if err == nil && s.acls != nil {
		err = s.expireTokens(r)
	}
	return nil, err
}
