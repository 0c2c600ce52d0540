package jobspec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/troupe-dev/troupe/messages"
)

func TestValidateQemuConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"valid", map[string]any{"image_path": "local/disk.img", "accelerator": "tcg",
			"port_map": map[string]any{"http": 8080}, "args": []any{"-kernel", "k"}, "graceful_shutdown": true}, ""},
		{"no image", map[string]any{"accelerator": "kvm"}, "config: image_path must be a non-empty string"},
		{"unknown key", map[string]any{"image_path": "d", "guest_agent": true}, `config: unknown config key "guest_agent"`},
		{"bad accelerator", map[string]any{"image_path": "d", "accelerator": "xen"}, `config: accelerator must be "tcg" or "kvm"`},
		{"bridge", nil, `the group's network mode must be "host", not "bridge"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := validJob(t)
			task := job.TaskGroups[0].Tasks[0]
			task.Driver = "qemu"
			var err error
			if tc.cfg == nil {
				job.TaskGroups[0].Networks = []*messages.NetworkResource{{Mode: "bridge"}}
				tc.cfg = map[string]any{"image_path": "d"}
			}
			task.Config, err = structpb.NewStruct(tc.cfg)
			require.NoError(t, err)
			err = Validate(job)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}
