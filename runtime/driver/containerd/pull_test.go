//go:build linux

package containerd

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver/containerd/ctrdtest"
)

func TestPullWithLogin(t *testing.T) {
	e := setupEnv(t)
	reg := ctrdtest.StartRegistry(t, true)
	img, err := ctrdtest.BuildImage(map[string]string{"etc/private": "logged in\n"})
	require.NoError(t, err)
	require.NoError(t, reg.Push(img, "private/busybox", "v1"))

	tests := []struct {
		name    string
		auth    any
		wantErr string
	}{
		{name: "no login", wantErr: "401 Unauthorized"},
		{name: "wrong password", auth: map[string]any{"username": ctrdtest.RegistryUser, "password": "nope"},
			wantErr: "401 Unauthorized"},
		{name: "login", auth: map[string]any{"username": ctrdtest.RegistryUser, "password": ctrdtest.RegistryPassword}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.newDriver(t)
			cfg := e.taskConfig(t, "cat /etc/private")
			cfg.Config["image"] = reg.Addr() + "/private/busybox:v1"
			if tt.auth != nil {
				cfg.Config["auth"] = tt.auth
			}
			e.removeAtEnd(t, cfg.ID)
			_, err := d.StartTask(context.Background(), cfg)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrImagePull)
				require.ErrorContains(t, err, tt.wantErr)
				require.NotContains(t, e.containers(t), ContainerID(cfg.ID))
				return
			}
			require.NoError(t, err)
			require.True(t, result(t, d, cfg.ID).Successful(), readFile(t, cfg.StderrPath))
			waitOutput(t, cfg.StdoutPath, "logged in\n")
		})
	}
}
