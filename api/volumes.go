package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// Volumes is the /v1/volume(s) family (CSI volumes).
type Volumes struct{ c *Client }

// Volumes returns the volume endpoints.
func (c *Client) Volumes() *Volumes { return &Volumes{c: c} }

// volumeRegisterRequest is Nomad's register body.
type volumeRegisterRequest struct {
	Volumes []json.RawMessage
}

// Register registers a volume (PUT /v1/volume/csi/:id).
func (v *Volumes) Register(vol *messages.CSIVolume, w *WriteOptions) (*WriteMeta, error) {
	raw, err := json.Marshal(vol)
	if err != nil {
		return nil, err
	}
	return v.c.write(http.MethodPut, "/v1/volume/csi/"+escape(vol.GetID()), &volumeRegisterRequest{Volumes: []json.RawMessage{raw}}, nil, w)
}

// VolumeCreateResponse answers PUT /v1/volume/csi/:id/create (Nomad's
// CSIVolumeCreateResponse): the created volumes, with the ExternalID,
// Capacity and Context the plugin gave them.
type VolumeCreateResponse struct {
	Volumes  []*messages.CSIVolume
	Warnings string
	Index    uint64
}

// Create has the volume's plugin create it in the storage provider and
// registers it (PUT /v1/volume/csi/:id/create). It returns the created
// volumes.
func (v *Volumes) Create(vol *messages.CSIVolume, w *WriteOptions) ([]*messages.CSIVolume, *WriteMeta, error) {
	raw, err := json.Marshal(vol)
	if err != nil {
		return nil, nil, err
	}
	var out VolumeCreateResponse
	wm, err := v.c.write(http.MethodPut, "/v1/volume/csi/"+escape(vol.GetID())+"/create",
		&volumeRegisterRequest{Volumes: []json.RawMessage{raw}}, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return out.Volumes, wm, nil
}

// Detach releases the volume's claims on a node, e.g. one that is lost
// (DELETE /v1/volume/csi/:id/detach?node=). nodeID is a full node ID.
func (v *Volumes) Detach(volID, nodeID string, w *WriteOptions) error {
	params := url.Values{"node": {nodeID}}
	_, err := v.c.writeParams(http.MethodDelete, "/v1/volume/csi/"+escape(volID)+"/detach", params, nil, nil, w)
	return err
}

// Delete has the volume's plugin delete it in the storage provider and
// deregisters it (DELETE /v1/volume/csi/:id/delete). secrets, added to
// the volume's own, travel in the X-Nomad-CSI-Secrets header; a secret
// the header cannot carry is ErrBadSecret, and nothing is sent.
func (v *Volumes) Delete(volID string, secrets map[string]string, w *WriteOptions) error {
	header, err := csiSecretsHeader(secrets)
	if err != nil {
		return err
	}
	_, err = v.c.writeRequest(http.MethodDelete, "/v1/volume/csi/"+escape(volID)+"/delete", nil, header, nil, nil, w)
	return err
}

// csiSecretsHeader encodes secrets as Nomad does: "k=v,k2=v2" (sorted).
func csiSecretsHeader(secrets map[string]string) (http.Header, error) {
	if len(secrets) == 0 {
		return nil, nil
	}
	pairs := make([]string, 0, len(secrets))
	for k, val := range secrets {
		if k == "" || strings.ContainsAny(k, "=,") || strings.Contains(val, ",") {
			return nil, fmt.Errorf("%w: %q: the key must be non-empty without '=' or ',', the value without ','", ErrBadSecret, k)
		}
		pairs = append(pairs, k+"="+val)
	}
	sort.Strings(pairs)
	h := http.Header{}
	h.Set("X-Nomad-CSI-Secrets", strings.Join(pairs, ","))
	return h, nil
}

// List lists CSI volumes (GET /v1/volumes?type=csi).
func (v *Volumes) List(q *QueryOptions) ([]*messages.CSIVolumeListStub, *QueryMeta, error) {
	var out []*messages.CSIVolumeListStub
	q = withParam(q, "type", "csi")
	qm, err := v.c.query("/v1/volumes", &out, q)
	return out, qm, err
}

// Info reads one volume (GET /v1/volume/csi/:id).
func (v *Volumes) Info(id string, q *QueryOptions) (*messages.CSIVolume, *QueryMeta, error) {
	var out messages.CSIVolume
	qm, err := v.c.query("/v1/volume/csi/"+escape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Deregister removes a volume (DELETE /v1/volume/csi/:id).
func (v *Volumes) Deregister(id string, force bool, w *WriteOptions) error {
	params := url.Values{}
	if force {
		params.Set("force", "true")
	}
	_, err := v.c.writeParams(http.MethodDelete, "/v1/volume/csi/"+escape(id), params, nil, nil, w)
	return err
}

// Plugins is the /v1/plugin(s) family (CSI plugins).
type Plugins struct{ c *Client }

// Plugins returns the plugin endpoints.
func (c *Client) Plugins() *Plugins { return &Plugins{c: c} }

// List lists CSI plugins (GET /v1/plugins?type=csi).
func (p *Plugins) List(q *QueryOptions) ([]*messages.CSIPluginListStub, *QueryMeta, error) {
	var out []*messages.CSIPluginListStub
	qm, err := p.c.query("/v1/plugins", &out, withParam(q, "type", "csi"))
	return out, qm, err
}

// Info reads one plugin (GET /v1/plugin/csi/:id).
func (p *Plugins) Info(id string, q *QueryOptions) (*messages.CSIPlugin, *QueryMeta, error) {
	var out messages.CSIPlugin
	qm, err := p.c.query("/v1/plugin/csi/"+escape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// withParam returns q (or new options) with one more query parameter.
func withParam(q *QueryOptions, k, v string) *QueryOptions {
	out := &QueryOptions{}
	if q != nil {
		*out = *q
	}
	params := map[string]string{k: v}
	for pk, pv := range out.Params {
		params[pk] = pv
	}
	out.Params = params
	return out
}
