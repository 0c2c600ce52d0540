package hostpath

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// identity is the CSI Identity service.
type identity struct {
	csipb.UnimplementedIdentityServer
	p *Plugin
}

func (s *identity) GetPluginInfo(context.Context, *csipb.GetPluginInfoRequest) (*csipb.GetPluginInfoResponse, error) {
	return &csipb.GetPluginInfoResponse{Name: s.p.cfg.Name, VendorVersion: s.p.cfg.Version}, nil
}

// GetPluginCapabilities reports CONTROLLER_SERVICE in every mode: the
// plugin as a whole has one, even where this instance serves only nodes.
func (s *identity) GetPluginCapabilities(context.Context, *csipb.GetPluginCapabilitiesRequest) (*csipb.GetPluginCapabilitiesResponse, error) {
	caps := []*csipb.PluginCapability{
		serviceCap(csipb.PluginCapability_Service_CONTROLLER_SERVICE),
		{Type: &csipb.PluginCapability_VolumeExpansion_{VolumeExpansion: &csipb.PluginCapability_VolumeExpansion{
			Type: csipb.PluginCapability_VolumeExpansion_ONLINE}}},
	}
	if len(s.p.cfg.Topology) > 0 {
		caps = append(caps, serviceCap(csipb.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS))
	}
	return &csipb.GetPluginCapabilitiesResponse{Capabilities: caps}, nil
}

func serviceCap(t csipb.PluginCapability_Service_Type) *csipb.PluginCapability {
	return &csipb.PluginCapability{Type: &csipb.PluginCapability_Service_{
		Service: &csipb.PluginCapability_Service{Type: t}}}
}

func (s *identity) Probe(context.Context, *csipb.ProbeRequest) (*csipb.ProbeResponse, error) {
	return &csipb.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

// checkCapabilities accepts mount capabilities with a known access mode;
// block volumes are not supported.
func checkCapabilities(caps ...*csipb.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Error(codes.InvalidArgument, "volume capability is missing")
	}
	for _, c := range caps {
		if c == nil {
			return status.Error(codes.InvalidArgument, "volume capability is missing")
		}
		mode := c.GetAccessMode().GetMode()
		if mode == csipb.VolumeCapability_AccessMode_UNKNOWN {
			return status.Error(codes.InvalidArgument, "access mode is missing or unknown")
		}
		if _, known := csipb.VolumeCapability_AccessMode_Mode_name[int32(mode)]; !known {
			return status.Errorf(codes.InvalidArgument, "unknown access mode %d", mode)
		}
		switch {
		case c.GetBlock() != nil:
			return status.Error(codes.InvalidArgument, "block volumes are not supported")
		case c.GetMount() == nil:
			return status.Error(codes.InvalidArgument, "access type is missing")
		}
	}
	return nil
}

// singleNode reports whether a capability allows one node only.
func singleNode(c *csipb.VolumeCapability) bool {
	switch c.GetAccessMode().GetMode() {
	case csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:
		return true
	}
	return false
}

func internal(err error) error { return status.Error(codes.Internal, err.Error()) }
