//go:build linux

package containerd

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPullWithLogin(t *testing.T) {
	e := setupEnv(t)
	e.reg(t) // skips without docker-registry
	reg, err := startRegistry(t.TempDir(), true)
	require.NoError(t, err)
	t.Cleanup(reg.stop)
	img, err := buildImage(map[string]string{"etc/private": "logged in\n"})
	require.NoError(t, err)
	require.NoError(t, reg.push(img, "private/busybox", "v1"))

	tests := []struct {
		name    string
		auth    any
		wantErr string
	}{
		{name: "no login", wantErr: "401 Unauthorized"},
		{name: "wrong password", auth: map[string]any{"username": testUser, "password": "nope"},
			wantErr: "401 Unauthorized"},
		{name: "login", auth: map[string]any{"username": testUser, "password": testPassword}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.newDriver(t)
			cfg := e.taskConfig(t, "cat /etc/private")
			cfg.Config["image"] = reg.addr + "/private/busybox:v1"
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
