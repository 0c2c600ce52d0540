package cni

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"
)

// ADD goes through libcni, which also caches the result (in CacheDir, on
// tmpfs). CHECK and DEL need the result that the client persisted, which
// libcni only takes from its cache, so they run the plugins here with the
// persisted result as prevResult, the same way libcni builds their input.

// runtimeConf is the libcni runtime config of an allocation.
func (n *Network) runtimeConf(req SetupRequest) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{
		ContainerID:    req.AllocID,
		NetNS:          netnsPath(n.cfg.NetnsDir, req.AllocID),
		IfName:         IfName,
		Args:           req.cniArgs(),
		CapabilityArgs: req.capabilityArgs(),
	}
}

// execList runs command (CHECK or DEL) on the plugins of the network, in
// list order for CHECK and in reverse for DEL, with prev as prevResult
// (none when nil), skipping the plugin types in skip.
func (n *Network) execList(ctx context.Context, command string, rt *libcni.RuntimeConf, prev types.Result,
	skip ...string) error {
	var order []*libcni.PluginConfig
	for _, p := range n.list.Plugins {
		if !slices.Contains(skip, p.Network.Type) {
			order = append(order, p)
		}
	}
	if command == "DEL" {
		for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
			order[i], order[j] = order[j], order[i]
		}
	}
	args := &invoke.Args{
		Command: command, ContainerID: rt.ContainerID, NetNS: rt.NetNS,
		PluginArgs: rt.Args, IfName: rt.IfName, Path: strings.Join(n.cfg.PluginDirs, string(os.PathListSeparator)),
	}
	for _, p := range order {
		conf, err := n.pluginConf(p, rt, prev)
		if err != nil {
			return err
		}
		path, err := invoke.FindInPath(p.Network.Type, n.cfg.PluginDirs)
		if err != nil {
			return fmt.Errorf("%w: %q: %v", ErrPluginNotFound, p.Network.Type, err)
		}
		if err := invoke.ExecPluginWithoutResult(ctx, path, conf, args, n.exec); err != nil {
			return fmt.Errorf("%w: %s %s: %v", ErrPlugin, p.Network.Type, strings.ToLower(command), err)
		}
	}
	return nil
}

// pluginConf is one plugin's stdin: its config with the network's name
// and version, prevResult, and the runtime config it has capabilities for.
func (n *Network) pluginConf(p *libcni.PluginConfig, rt *libcni.RuntimeConf, prev types.Result) ([]byte, error) {
	inject := map[string]any{"name": n.list.Name, "cniVersion": n.list.CNIVersion}
	if prev != nil {
		inject["prevResult"] = prev
	}
	rc := map[string]any{}
	for capability, on := range p.Network.Capabilities {
		if v, ok := rt.CapabilityArgs[capability]; on && ok {
			rc[capability] = v
		}
	}
	if len(rc) > 0 {
		inject["runtimeConfig"] = rc
	}
	conf, err := libcni.InjectConf(p, inject)
	if err != nil {
		return nil, fmt.Errorf("%w: building %s config: %v", ErrPlugin, p.Network.Type, err)
	}
	return conf.Bytes, nil
}

// prevResult is the result to give CHECK and DEL: the persisted one, else
// libcni's cached one, else none.
func (n *Network) prevResult(raw []byte, rt *libcni.RuntimeConf) types.Result {
	if len(raw) > 0 {
		if res, err := decodeResult(raw); err == nil {
			return res
		}
	}
	if res, err := n.cni.GetNetworkListCachedResult(n.list, rt); err == nil && res != nil {
		return res
	}
	return nil
}

// dropCache removes libcni's cached result of the allocation (libcni's
// path: CacheDir/results/<network>-<container ID>-<ifname>).
func (n *Network) dropCache(allocID string) error {
	path := filepath.Join(n.cfg.CacheDir, "results", n.list.Name+"-"+allocID+"-"+IfName)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// newExec is libcni's plugin runner with the plugins' stderr logged.
func newExec(log *slog.Logger) invoke.Exec {
	return &invoke.DefaultExec{
		RawExec:       &invoke.RawExec{Stderr: logWriter{log}},
		PluginDecoder: version.PluginDecoder{},
	}
}

// logWriter logs what a plugin writes to stderr.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	if s := strings.TrimSpace(string(p)); s != "" {
		w.log.Warn("cni plugin stderr", "output", s)
	}
	return len(p), nil
}
