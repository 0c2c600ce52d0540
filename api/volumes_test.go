package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// volumeRequest is what the fake server saw.
type volumeRequest struct {
	method, path, rawQuery, secrets, body string
}

// volumeServer answers every request with status and body and records it.
func volumeServer(t *testing.T, status int, body string) (*Client, *[]volumeRequest) {
	t.Helper()
	var seen []volumeRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = append(seen, volumeRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Nomad-CSI-Secrets"), string(b)})
		w.Header().Set("X-Nomad-Index", "12")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(&Config{Address: srv.URL})
	require.NoError(t, err)
	return c, &seen
}

func TestVolumeCreate(t *testing.T) {
	c, seen := volumeServer(t, 200, `{"Volumes":[{"ID":"vol1","ExternalID":"vol-0abc"}],"Warnings":""}`)
	vols, wm, err := c.Volumes().Create(&messages.CSIVolume{ID: "vol1", PluginID: "ebs"}, nil)
	require.NoError(t, err)
	require.Len(t, vols, 1)
	require.Equal(t, "vol-0abc", vols[0].ExternalID)
	require.Equal(t, uint64(12), wm.LastIndex)
	require.Equal(t, volumeRequest{method: "PUT", path: "/v1/volume/csi/vol1/create",
		body: `{"Volumes":[{"ID":"vol1","PluginID":"ebs"}]}`}, stripNewline((*seen)[0]))

	c, _ = volumeServer(t, 409, "volume vol1 already exists")
	_, _, err = c.Volumes().Create(&messages.CSIVolume{ID: "vol1"}, nil)
	require.EqualError(t, err, "Unexpected response code: 409 (volume vol1 already exists)")
}

func TestVolumeDetachDeleteDeregister(t *testing.T) {
	c, seen := volumeServer(t, 200, `{"Index":12}`)
	require.NoError(t, c.Volumes().Detach("vol 1", "n1n1", nil))
	require.NoError(t, c.Volumes().Delete("vol1", map[string]string{"token": "a=b", "az": "eu"}, nil))
	require.NoError(t, c.Volumes().Delete("vol1", nil, nil))
	require.NoError(t, c.Volumes().Deregister("vol1", true, nil))
	require.Equal(t, []volumeRequest{
		{method: "DELETE", path: "/v1/volume/csi/vol 1/detach", rawQuery: "node=n1n1"},
		{method: "DELETE", path: "/v1/volume/csi/vol1/delete", secrets: "az=eu,token=a=b"},
		{method: "DELETE", path: "/v1/volume/csi/vol1/delete"},
		{method: "DELETE", path: "/v1/volume/csi/vol1", rawQuery: "force=true"},
	}, *seen)

	for _, bad := range []map[string]string{{"": "v"}, {"a=b": "v"}, {"a,b": "v"}, {"k": "a,b"}} {
		require.ErrorIs(t, c.Volumes().Delete("vol1", bad, nil), ErrBadSecret)
	}
	require.Len(t, *seen, 4, "a bad secret sends nothing")

	c, _ = volumeServer(t, 404, "volume not found")
	require.True(t, IsNotFound(c.Volumes().Detach("nope", "n1", nil)))
	require.True(t, IsNotFound(c.Volumes().Delete("nope", nil, nil)))
}

func stripNewline(r volumeRequest) volumeRequest {
	if n := len(r.body); n > 0 && r.body[n-1] == '\n' {
		r.body = r.body[:n-1]
	}
	return r
}
