package cni

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// checkPorts fails with a PortInUseError when one of the request's host
// ports is forwarded by portmap for another container (portmap does not
// check) or bound by a socket on the host.
func (n *Network) checkPorts(ctx context.Context, req SetupRequest) error {
	if len(req.Ports) == 0 {
		return nil
	}
	mapped, err := mappedPorts(ctx)
	if err != nil {
		return fmt.Errorf("cni: reading port mappings: %w", err)
	}
	for _, p := range req.Ports {
		if owner, ok := mapped[strconv.Itoa(p.HostPort)+"/"+p.Protocol]; ok && owner != req.AllocID {
			return &PortInUseError{Port: p.HostPort, Protocol: p.Protocol,
				By: fmt.Sprintf("the port mapping of %q", owner)}
		}
		if err := probePort(p.HostPort, p.Protocol); err != nil {
			return err
		}
	}
	return nil
}

// probePort binds the port on every IPv4 address of the host, and lets it
// go at once.
func probePort(port int, protocol string) error {
	addr := net.JoinHostPort("0.0.0.0", strconv.Itoa(port))
	var err error
	if protocol == "udp" {
		var c net.PacketConn
		if c, err = net.ListenPacket("udp4", addr); err == nil {
			return c.Close()
		}
	} else {
		var l net.Listener
		if l, err = net.Listen("tcp4", addr); err == nil {
			return l.Close()
		}
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return &PortInUseError{Port: port, Protocol: protocol, By: "a socket on the host"}
	}
	return fmt.Errorf("cni: probing host port %d/%s: %w", port, protocol, err)
}
