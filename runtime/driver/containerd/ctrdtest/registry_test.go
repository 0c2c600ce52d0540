//go:build linux

package ctrdtest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRegistryPushWithLogin(t *testing.T) {
	reg := StartRegistry(t, true)
	img, err := BuildImage(map[string]string{"etc/x": "y"})
	require.NoError(t, err)
	require.NoError(t, reg.Push(img, "a/b", "v1"))

	get := func(user, password string) *http.Response {
		req, err := http.NewRequest(http.MethodHead, "http://"+reg.Addr()+"/v2/a/b/manifests/v1", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := httpClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp
	}
	require.Equal(t, http.StatusUnauthorized, get("", "").StatusCode)
	require.Equal(t, http.StatusUnauthorized, get(RegistryUser, "nope").StatusCode)
	resp := get(RegistryUser, RegistryPassword)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, img.Digest().String(), resp.Header.Get("Docker-Content-Digest"))

	other, err := BuildImage(map[string]string{"etc/x": "z"})
	require.NoError(t, err)
	require.NotEqual(t, img.Digest(), other.Digest(), "extra files make another image")
}
