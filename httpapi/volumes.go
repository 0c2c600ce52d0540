package httpapi

import (
	"io"
	"net/http"
	"strings"

	"github.com/troupe-dev/troupe/cluster/state"
	"github.com/troupe-dev/troupe/jobspec"
	"github.com/troupe-dev/troupe/messages"
)

var (
	volumeTables = []string{"csi_volumes"}
	pluginTables = []string{"csi_plugins"}
)

// csiOnly refuses volume and plugin types troupe does not have.
func csiOnly(r *http.Request) error {
	if t := r.URL.Query().Get("type"); t != "" && t != "csi" {
		return codeErr(http.StatusBadRequest, "unsupported type %q: only \"csi\"", t)
	}
	return nil
}

func volumeStub(v *messages.CSIVolume) *messages.CSIVolumeListStub {
	out := &messages.CSIVolumeListStub{ID: v.ID, Namespace: v.Namespace, Name: v.Name, ExternalID: v.ExternalID,
		AccessMode: v.AccessMode, AttachmentMode: v.AttachmentMode, Schedulable: v.Schedulable, PluginID: v.PluginID,
		Provider: v.Provider, ControllerRequired: v.ControllerRequired, ControllersHealthy: v.ControllersHealthy,
		ControllersExpected: v.ControllersExpected, NodesHealthy: v.NodesHealthy, NodesExpected: v.NodesExpected,
		CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex, CreateTime: v.CreateTime, ModifyTime: v.ModifyTime,
		Topologies: v.Topologies}
	for _, c := range v.GetClaims() {
		if c.GetMode() == "write" {
			out.CurrentWriters++
		} else {
			out.CurrentReaders++
		}
	}
	return out
}

// volumeList handles GET /v1/volumes?type=csi[&plugin_id=][&prefix=].
func (s *Server) volumeList(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := csiOnly(r); err != nil {
		return nil, err
	}
	return s.query(w, r, volumeTables, func(snap *state.Snap) (any, error) {
		vols := snap.CSIVolumes()
		if p := r.URL.Query().Get("plugin_id"); p != "" {
			vols = snap.CSIVolumesByPlugin(p)
		}
		out := []*messages.CSIVolumeListStub{}
		for _, v := range vols {
			if matchPrefix(r, v.GetID()) && inNamespace(r, v.GetNamespace()) {
				out = append(out, volumeStub(v))
			}
		}
		return paged(w, r, out, volumeOrder)
	})
}

// volumeGet handles GET /v1/volume/csi/:id.
func (s *Server) volumeGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, volumeTables, func(snap *state.Snap) (any, error) {
		v := snap.CSIVolumeByID(namespace(r), r.PathValue("id"))
		if v == nil {
			return nil, codeErr(http.StatusNotFound, "volume not found: %q", r.PathValue("id"))
		}
		return newVolumeJSON(snap, v), nil
	})
}

// volumeRegister handles PUT /v1/volume/csi/:id with Nomad's
// {"Volumes": [...]} body: each volume is validated, then registered by
// one raft command.
func (s *Server) volumeRegister(w http.ResponseWriter, r *http.Request) (any, error) {
	vols, err := parseVolumeBody(r, false)
	if err != nil {
		return nil, err
	}
	if err := s.checkVolumeNamespaces(vols); err != nil {
		return nil, err
	}
	var index uint64
	for _, v := range vols {
		if _, index, err = s.apply(r, &messages.Command{Cmd: &messages.Command_RegisterVolume{
			RegisterVolume: &messages.RegisterVolume{Volume: v}}}); err != nil {
			return nil, codeErr(http.StatusBadRequest, "%v", err)
		}
	}
	setIndex(w, index)
	return map[string]any{"Warnings": "", "Index": index}, nil
}

// parseVolumeBody reads a register or create body ({"Volumes": [...]} or
// one volume): every volume is canonicalized and validated by the rules
// of register (create false) or create, and must carry the URL's ID. All
// problems are reported together as one 400. Claims, health and modes
// are dropped: they are the servers' to keep. A registered volume's
// required topologies are its Topologies (jobspec.AdoptRequiredTopologies).
func parseVolumeBody(r *http.Request, create bool) ([]*messages.CSIVolume, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	vols, err := jobspec.ParseVolumesJSON(body)
	if err != nil {
		return nil, codeErr(http.StatusBadRequest, "%v", err)
	}
	id := r.PathValue("id")
	var problems []string
	for _, v := range vols {
		v.Namespace = requestNamespace(r, v.Namespace)
		if err := aclCheckNs(r, v.Namespace); err != nil {
			return nil, err
		}
		jobspec.CanonicalizeVolume(v)
		if v.GetID() != id {
			problems = append(problems, "volume ID "+quote(v.GetID())+" does not match the URL's "+quote(id))
		}
		if err := jobspec.ValidateVolume(v, create); err != nil {
			problems = append(problems, err.Error())
		}
		v.Claims, v.Schedulable, v.AccessMode, v.AttachmentMode = nil, false, "", ""
		if !create {
			jobspec.AdoptRequiredTopologies(v)
		}
	}
	if len(problems) > 0 {
		return nil, codeErr(http.StatusBadRequest, "%s", strings.Join(problems, "\n"))
	}
	return vols, nil
}

// pluginList handles GET /v1/plugins?type=csi.
func (s *Server) pluginList(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := csiOnly(r); err != nil {
		return nil, err
	}
	return s.query(w, r, pluginTables, func(snap *state.Snap) (any, error) {
		out := []*messages.CSIPluginListStub{}
		for _, p := range snap.CSIPlugins() {
			if matchPrefix(r, p.GetID()) {
				out = append(out, &messages.CSIPluginListStub{ID: p.ID, Provider: p.Provider,
					ControllerRequired: p.ControllerRequired, ControllersHealthy: p.ControllersHealthy,
					ControllersExpected: p.ControllersExpected, NodesHealthy: p.NodesHealthy,
					NodesExpected: p.NodesExpected, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex})
			}
		}
		return paged(w, r, out, pluginOrder)
	})
}

// pluginGet handles GET /v1/plugin/csi/:id.
func (s *Server) pluginGet(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.query(w, r, pluginTables, func(snap *state.Snap) (any, error) {
		p := snap.CSIPluginByID(r.PathValue("id"))
		if p == nil {
			return nil, codeErr(http.StatusNotFound, "plugin not found: %q", r.PathValue("id"))
		}
		return p, nil
	})
}

func quote(s string) string { return `"` + s + `"` }
