package csi

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// PluginInfo implements Client (Identity.GetPluginInfo).
func (c *grpcClient) PluginInfo(ctx context.Context) (string, string, error) {
	resp, err := c.identity.GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{})
	if err != nil {
		return "", "", wrap("GetPluginInfo", "", err)
	}
	return resp.GetName(), resp.GetVendorVersion(), nil
}

// Probe implements Client (Identity.Probe). A plugin that leaves ready
// unset is ready, as the spec says.
func (c *grpcClient) Probe(ctx context.Context) (bool, error) {
	resp, err := c.identity.Probe(ctx, &csipb.ProbeRequest{})
	if err != nil {
		return false, wrap("Probe", "", err)
	}
	if resp.GetReady() == nil {
		return true, nil
	}
	return resp.GetReady().GetValue(), nil
}

// PluginCapabilities implements Client (Identity.GetPluginCapabilities).
func (c *grpcClient) PluginCapabilities(ctx context.Context) (PluginCaps, error) {
	resp, err := c.identity.GetPluginCapabilities(ctx, &csipb.GetPluginCapabilitiesRequest{})
	if err != nil {
		return PluginCaps{}, wrap("GetPluginCapabilities", "", err)
	}
	return pluginCapsFromCSI(resp.GetCapabilities()), nil
}

// ControllerCapabilities implements Client (ControllerGetCapabilities).
func (c *grpcClient) ControllerCapabilities(ctx context.Context) (ControllerCaps, error) {
	resp, err := c.controller.ControllerGetCapabilities(ctx, &csipb.ControllerGetCapabilitiesRequest{})
	if err != nil {
		return ControllerCaps{}, wrap("ControllerGetCapabilities", "", err)
	}
	return controllerCapsFromCSI(resp.GetCapabilities()), nil
}

// NodeInfo implements Client (NodeGetInfo).
func (c *grpcClient) NodeInfo(ctx context.Context) (NodeInfo, error) {
	resp, err := c.node.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
	if err != nil {
		return NodeInfo{}, wrap("NodeGetInfo", "", err)
	}
	return NodeInfo{
		NodeID:     resp.GetNodeId(),
		MaxVolumes: resp.GetMaxVolumesPerNode(),
		Topology:   cloneMap(resp.GetAccessibleTopology().GetSegments()),
	}, nil
}

// NodeCapabilities implements Client (NodeGetCapabilities).
func (c *grpcClient) NodeCapabilities(ctx context.Context) (NodeCaps, error) {
	resp, err := c.node.NodeGetCapabilities(ctx, &csipb.NodeGetCapabilitiesRequest{})
	if err != nil {
		return NodeCaps{}, wrap("NodeGetCapabilities", "", err)
	}
	return nodeCapsFromCSI(resp.GetCapabilities()), nil
}
