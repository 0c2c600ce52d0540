package containerd

import (
	"context"
	"testing"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// TestResourceOptsReservedCores: the cores the scheduler reserved are the
// container's cpuset in its OCI spec; without them no cpuset is set.
func TestResourceOptsReservedCores(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cores []int
		want  string
	}{
		{"reserved", []int{1, 3}, "1,3"},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &oci.Spec{Linux: &specs.Linux{}}
			for _, o := range resourceOpts(&driver.TaskConfig{CPU: 500, MemoryMB: 64, ReservedCores: tc.cores}) {
				require.NoError(t, o(context.Background(), nil, &containers.Container{}, s))
			}
			got := ""
			if s.Linux.Resources != nil && s.Linux.Resources.CPU != nil {
				got = s.Linux.Resources.CPU.Cpus
			}
			require.Equal(t, tc.want, got)
		})
	}
}
