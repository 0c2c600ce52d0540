package agent

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGossipKeys(t *testing.T) {
	k, err := NewGossipKey()
	require.NoError(t, err)
	b, err := GossipKeyBytes(k)
	require.NoError(t, err)
	require.Len(t, b, 32)
	for _, n := range []int{16, 24} {
		_, err := GossipKeyBytes(base64.StdEncoding.EncodeToString(make([]byte, n)))
		require.NoError(t, err)
	}
	_, err = GossipKeyBytes(base64.StdEncoding.EncodeToString(make([]byte, 20)))
	require.ErrorContains(t, err, "20 bytes; it must be 16, 24 or 32")
	_, err = GossipKeyBytes("not base64!")
	require.ErrorContains(t, err, "not base64")
	cfg := testConfig(t, t.TempDir())
	cfg.GossipKey = "short"
	_, err = New(cfg)
	require.ErrorIs(t, err, ErrConfig)
}
