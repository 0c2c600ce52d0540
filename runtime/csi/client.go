package csi

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// Client talks to one CSI plugin instance. Every call takes a context
// that bounds it; errors keep the plugin's gRPC status for Code,
// IsNotFound, IsUnavailable and IsRetryable. Implementations: the gRPC
// client from Dial, and Fake.
type Client interface {
	PluginInfo(ctx context.Context) (name, version string, err error)
	Probe(ctx context.Context) (ready bool, err error)
	PluginCapabilities(ctx context.Context) (PluginCaps, error)
	ControllerCapabilities(ctx context.Context) (ControllerCaps, error)
	NodeInfo(ctx context.Context) (NodeInfo, error)
	NodeCapabilities(ctx context.Context) (NodeCaps, error)

	ControllerPublish(ctx context.Context, req *PublishRequest) (publishContext map[string]string, err error)
	ControllerUnpublish(ctx context.Context, volumeID, nodeID string, secrets map[string]string) error
	CreateVolume(ctx context.Context, req *CreateRequest) (*Volume, error)
	DeleteVolume(ctx context.Context, volumeID string, secrets map[string]string) error
	ControllerExpand(ctx context.Context, volumeID string, bytes int64, secrets map[string]string) (int64, error)
	CreateSnapshot(ctx context.Context, req *SnapshotRequest) (*Snapshot, error)
	DeleteSnapshot(ctx context.Context, snapshotID string, secrets map[string]string) error

	NodeStage(ctx context.Context, req *StageRequest) error
	NodeUnstage(ctx context.Context, volumeID, stagingPath string) error
	NodePublish(ctx context.Context, req *NodePublishRequest) error
	NodeUnpublish(ctx context.Context, volumeID, targetPath string) error

	Close() error
}

// DialTimeout bounds Dial when ctx has no earlier deadline.
const DialTimeout = 5 * time.Second

var _ Client = (*grpcClient)(nil)

// grpcClient is the real Client: gRPC over a unix socket.
type grpcClient struct {
	conn       *grpc.ClientConn
	identity   csipb.IdentityClient
	controller csipb.ControllerClient
	node       csipb.NodeClient
}

// Dial connects to the plugin listening on socketPath ("/path/csi.sock" or
// "unix:///path/csi.sock") and waits until the connection is ready, for
// at most DialTimeout or ctx's deadline. A missing socket or a refused
// connection fails at once with ErrDial (IsUnavailable is true).
func Dial(ctx context.Context, socketPath string) (Client, error) {
	path, err := socketFile(socketPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDial, err)
	}
	// passthrough plus a dialer: the path is never parsed as a URL, so
	// '#', '?' or '%' in it are safe.
	conn, err := grpc.NewClient("passthrough:///csi",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDial, path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	if err := waitReady(ctx, conn); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("%w: %s: %w", ErrDial, path, err)
	}
	return &grpcClient{
		conn:       conn,
		identity:   csipb.NewIdentityClient(conn),
		controller: csipb.NewControllerClient(conn),
		node:       csipb.NewNodeClient(conn),
	}, nil
}

// socketFile turns an endpoint into an absolute socket path.
func socketFile(endpoint string) (string, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(endpoint, "unix://"), "unix:")
	if path == "" {
		return "", fmt.Errorf("%w: empty socket path", ErrDial)
	}
	return filepath.Abs(path)
}

// waitReady connects conn and waits for Ready; TransientFailure (nothing
// listening) ends the wait at once.
func waitReady(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		s := conn.GetState()
		switch s {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			return fmt.Errorf("connection state %s", s)
		}
		if !conn.WaitForStateChange(ctx, s) {
			return ctx.Err()
		}
	}
}

// Close implements Client.
func (c *grpcClient) Close() error { return c.conn.Close() }

// wrap adds the RPC name to a plugin error, keeping its status.
func wrap(rpc, id string, err error) error {
	if err == nil {
		return nil
	}
	if id != "" {
		return fmt.Errorf("csi: %s %s: %w", rpc, id, err)
	}
	return fmt.Errorf("csi: %s: %w", rpc, err)
}

// required returns ErrInvalidRequest naming the first empty field.
func required(rpc string, fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i+1] == "" {
			return fmt.Errorf("%w: %s: %s is empty", ErrInvalidRequest, rpc, fields[i])
		}
	}
	return nil
}
