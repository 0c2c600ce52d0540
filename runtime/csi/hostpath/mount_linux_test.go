package hostpath

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnescapeMountPath(t *testing.T) {
	cases := map[string]string{
		`/a\040b/c`: "/a b/c",
		"/plain":    "/plain",
		`/odd\04`:   `/odd\04`,
		`/tab\011x`: "/tab\tx",
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) { require.Equal(t, want, unescapeMountPath(in)) })
	}
}
