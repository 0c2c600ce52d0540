package agent

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

func TestParseHostVolume(t *testing.T) {
	cases := []struct {
		in, name, path string
		readOnly       bool
		bad            bool
	}{
		{in: "data=/srv/data", name: "data", path: "/srv/data"},
		{in: "certs=/etc/certs:ro", name: "certs", path: "/etc/certs", readOnly: true},
		{in: "logs=/var/log:rw", name: "logs", path: "/var/log"},
		{in: "nopath=", bad: true},
		{in: "=/srv", bad: true},
		{in: "/srv/data", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			name, v, err := ParseHostVolume(c.in)
			if c.bad {
				require.ErrorIs(t, err, ErrConfig)
				require.Contains(t, err.Error(), "name=/path")
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.name, name)
			require.Equal(t, &messages.ClientHostVolume{Path: c.path, ReadOnly: c.readOnly}, v)
		})
	}
}

func TestAddHostVolumeTwice(t *testing.T) {
	cfg := DefaultConfig()
	require.NoError(t, cfg.AddHostVolume("data=/srv/a"))
	err := cfg.AddHostVolume("data=/srv/b")
	require.ErrorIs(t, err, ErrConfig)
	require.Contains(t, err.Error(), `"data" is given twice`)
	require.Equal(t, "/srv/a", cfg.HostVolumes["data"].Path)
}

func TestValidateHostVolumes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	cases := []struct {
		name string
		vol  *messages.ClientHostVolume
		says string // "" valid
	}{
		{"data", &messages.ClientHostVolume{Path: dir + "/"}, ""},
		{"ro.vol_1-x", &messages.ClientHostVolume{Path: dir, ReadOnly: true}, ""},
		{"bad name", &messages.ClientHostVolume{Path: dir}, `name has ' '`},
		{"rel", &messages.ClientHostVolume{Path: "srv/data"}, `path "srv/data" must be absolute`},
		{"gone", &messages.ClientHostVolume{Path: filepath.Join(dir, "gone")}, "no such file or directory"},
		{"file", &messages.ClientHostVolume{Path: file}, "is not a directory"},
		{"empty", &messages.ClientHostVolume{}, "path is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Dev = true
			cfg.HostVolumes = map[string]*messages.ClientHostVolume{c.name: c.vol}
			err := cfg.Validate()
			if c.says == "" {
				require.NoError(t, err)
				require.Equal(t, dir, cfg.HostVolumes[c.name].Path, "the path is cleaned")
				return
			}
			require.True(t, errors.Is(err, ErrConfig), "%v", err)
			require.Contains(t, err.Error(), c.says)
			require.Contains(t, err.Error(), `host volume "`+c.name+`"`)
		})
	}
}
