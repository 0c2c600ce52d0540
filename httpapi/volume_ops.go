package httpapi

import (
	"net/http"
	"strings"

	"github.com/troupe-dev/troupe/api"
	"github.com/troupe-dev/troupe/messages"
)

// Operator requests on CSI volumes do not become raft commands here: the
// leader's volume actor owns each volume (its claims, its controller
// calls), so they go to it through Backend.VolumeOp, and its answer comes
// back as the HTTP status.

// Ops of messages.VolumeOpRequest.
const (
	volumeOpCreate     = "create"
	volumeOpDelete     = "delete"
	volumeOpDetach     = "detach"
	volumeOpDeregister = "deregister"
)

// csiSecretsHeader carries per-request CSI secrets as "k=v,k2=v2", as
// Nomad's api.WriteOptions.SetHeadersFromCSISecrets writes them.
const csiSecretsHeader = "X-Nomad-CSI-Secrets"

// errStatus maps the code of a messages.Error from the volume manager to
// an HTTP status.
var errStatus = map[messages.ErrorCode]int{
	messages.CodeNotFound:    http.StatusNotFound,
	messages.CodeInvalid:     http.StatusBadRequest,
	messages.CodeConflict:    http.StatusConflict,
	messages.CodeNotLeader:   http.StatusServiceUnavailable,
	messages.CodeUnavailable: http.StatusServiceUnavailable,
}

// volumeCreate handles PUT /v1/volume/csi/:id/create with Nomad's
// CSIVolumeCreateRequest body ({"Volumes": [one volume]}): the volume is
// validated by create's rules, then the leader has the plugin create it
// and registers it. The answer is Nomad's CSIVolumeCreateResponse.
func (s *Server) volumeCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	vols, err := parseVolumeBody(r, true)
	if err != nil {
		return nil, err
	}
	switch {
	case len(vols) == 0:
		return nil, codeErr(http.StatusBadRequest, "the request body holds no volume to create")
	case len(vols) > 1:
		return nil, codeErr(http.StatusBadRequest, "the request body holds %d volumes with ID %q; create takes one", len(vols), vols[0].GetID())
	}
	if err := s.checkVolumeNamespaces(vols); err != nil {
		return nil, err
	}
	resp, err := s.volumeOp(w, r, &messages.VolumeOpRequest{Op: volumeOpCreate, VolumeID: vols[0].GetID(), Volume: vols[0]})
	if err != nil {
		return nil, err
	}
	out := &api.VolumeCreateResponse{Volumes: []*messages.CSIVolume{}, Index: resp.GetIndex()}
	if v := resp.GetVolume(); v != nil {
		out.Volumes = append(out.Volumes, v)
	}
	return out, nil
}

// volumeDetach handles DELETE /v1/volume/csi/:id/detach?node=NODE: the
// leader releases the volume's claims on that node. NODE is a full node ID
// (the CLI resolves prefixes).
func (s *Server) volumeDetach(w http.ResponseWriter, r *http.Request) (any, error) {
	node := r.URL.Query().Get("node")
	if node == "" {
		return nil, codeErr(http.StatusBadRequest, "missing ?node= (the ID of the node to detach the volume from)")
	}
	if done, err := s.volumeOnLeader(w, r); done || err != nil {
		return nil, err
	}
	resp, err := s.volumeOp(w, r, &messages.VolumeOpRequest{Op: volumeOpDetach, VolumeID: r.PathValue("id"), NodeID: node})
	if err != nil {
		return nil, err
	}
	return map[string]any{"Index": resp.GetIndex()}, nil
}

// volumeDelete handles DELETE /v1/volume/csi/:id/delete: the leader has
// the plugin delete the volume in the storage provider and deregisters it.
// Extra secrets come in the X-Nomad-CSI-Secrets header.
func (s *Server) volumeDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	secrets, err := parseCSISecrets(r.Header.Get(csiSecretsHeader))
	if err != nil {
		return nil, err
	}
	if done, err := s.volumeOnLeader(w, r); done || err != nil {
		return nil, err
	}
	resp, err := s.volumeOp(w, r, &messages.VolumeOpRequest{Op: volumeOpDelete, VolumeID: r.PathValue("id"), Secrets: secrets})
	if err != nil {
		return nil, err
	}
	return map[string]any{"Index": resp.GetIndex()}, nil
}

// volumeDeregister handles DELETE /v1/volume/csi/:id[?force=true]. An
// unknown volume is a 404 (the leader answers not_found).
func (s *Server) volumeDeregister(w http.ResponseWriter, r *http.Request) (any, error) {
	if done, err := s.volumeOnLeader(w, r); done || err != nil {
		return nil, err
	}
	resp, err := s.volumeOp(w, r, &messages.VolumeOpRequest{Op: volumeOpDeregister, VolumeID: r.PathValue("id"),
		Force: boolParam(r, "force")})
	if err != nil {
		return nil, err
	}
	return map[string]any{"Index": resp.GetIndex()}, nil
}

// volumeOnLeader passes an operator request on a registered volume to
// the leader (done, errProxied), or, on the leader, refuses it with a 404
// when the volume is not in the request's namespace.
func (s *Server) volumeOnLeader(w http.ResponseWriter, r *http.Request) (done bool, err error) {
	if s.writeToLeader(w, r) {
		return true, errProxied
	}
	return false, s.volumeInNamespace(r, r.PathValue("id"))
}

// volumeOp sends req to the leader's volume manager. No answer is a 503;
// an answer with an Error becomes the status of its code (errStatus, else
// 500) with its message as the body. On success it sets the index.
func (s *Server) volumeOp(w http.ResponseWriter, r *http.Request, req *messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) {
	resp, err := s.b.VolumeOp(r.Context(), req)
	if err != nil {
		return nil, codeErr(http.StatusServiceUnavailable, "volume %s %q: no answer from the leader: %v", req.Op, req.VolumeID, err)
	}
	if resp == nil {
		return nil, codeErr(http.StatusInternalServerError, "volume %s %q: empty answer from the leader", req.Op, req.VolumeID)
	}
	if e := resp.GetError(); e != nil {
		code, ok := errStatus[e.ErrorCode()]
		if !ok {
			code = http.StatusInternalServerError
		}
		msg := e.GetMessage()
		if msg == "" {
			msg = "volume " + req.Op + " " + quote(req.VolumeID) + ": " + e.GetCode()
		}
		return nil, codeErr(code, "%s", msg)
	}
	setIndex(w, resp.GetIndex())
	return resp, nil
}

// parseCSISecrets reads "k=v,k2=v2" (Nomad's X-Nomad-CSI-Secrets). A value
// may hold "=" but not ","; a pair without "=" or with an empty key is a
// 400. An empty header is no secrets.
func parseCSISecrets(h string) (map[string]string, error) {
	if h == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, pair := range strings.Split(h, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, codeErr(http.StatusBadRequest, "invalid %s header: %q is not key=value", csiSecretsHeader, pair)
		}
		out[k] = v
	}
	return out, nil
}
