package api

import (
	"encoding/json"
	"net/http"
	"net/url"

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
