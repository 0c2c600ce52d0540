package httpapi

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteJSONPretty: ?pretty indents, and the body ends with a newline
// either way, as json.Encoder's did.
func TestWriteJSONPretty(t *testing.T) {
	var flat, pretty bytes.Buffer
	require.NoError(t, writeJSON(&flat, map[string]int{"a": 1}, false))
	require.NoError(t, writeJSON(&pretty, map[string]int{"a": 1}, true))
	require.Equal(t, "{\"a\":1}\n", flat.String())
	require.Equal(t, "{\n    \"a\": 1\n}\n", pretty.String())
}
