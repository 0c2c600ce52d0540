package hostpath

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// env is a running plugin with raw CSI clients.
type env struct {
	p     *Plugin
	dir   string // temp dir: vols/, csi.sock, staging and targets
	sock  string
	id    csipb.IdentityClient
	ctrl  csipb.ControllerClient
	node  csipb.NodeClient
	ctx   context.Context
	cfg   Config
	t     *testing.T
	conns []*grpc.ClientConn
}

func start(t *testing.T, cfg Config) *env {
	t.Helper()
	dir := t.TempDir()
	if cfg.Root == "" {
		cfg.Root = filepath.Join(dir, "vols")
	}
	if cfg.NodeID == "" && cfg.Mode != ModeController {
		cfg.NodeID = "node-1"
	}
	p, err := New(cfg)
	require.NoError(t, err)
	sock := filepath.Join(shortDir(t), "csi.sock")
	require.NoError(t, p.Start(context.Background(), sock))
	t.Cleanup(p.Stop)
	conn, err := grpc.NewClient("passthrough:///csi", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &env{p: p, dir: dir, sock: sock, id: csipb.NewIdentityClient(conn),
		ctrl: csipb.NewControllerClient(conn), node: csipb.NewNodeClient(conn), ctx: ctx, cfg: p.cfg, t: t}
}

// shortDir is a temp dir with a short path: unix socket paths are limited
// to 108 bytes, and t.TempDir's include the test name.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "hp")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func mountCap(mode csipb.VolumeCapability_AccessMode_Mode) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
	}
}

var rw = mountCap(csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER)

func (e *env) volDir(id string) string  { return filepath.Join(e.cfg.Root, id) }
func (e *env) staging(id string) string { return filepath.Join(e.dir, "staging", id) }
func (e *env) target(id string) string  { return filepath.Join(e.dir, "targets", id, "mnt") }

func (e *env) create(id string) {
	e.t.Helper()
	_, err := e.ctrl.CreateVolume(e.ctx, &csipb.CreateVolumeRequest{Name: id,
		VolumeCapabilities: []*csipb.VolumeCapability{rw}})
	require.NoError(e.t, err)
}

func (e *env) stage(id string) {
	e.t.Helper()
	_, err := e.node.NodeStageVolume(e.ctx, &csipb.NodeStageVolumeRequest{VolumeId: id,
		StagingTargetPath: e.staging(id), VolumeCapability: rw})
	require.NoError(e.t, err)
}

func (e *env) publish(id string, readOnly bool) error {
	_, err := e.node.NodePublishVolume(e.ctx, &csipb.NodePublishVolumeRequest{VolumeId: id,
		StagingTargetPath: e.staging(id), TargetPath: e.target(id), VolumeCapability: rw, Readonly: readOnly})
	return err
}

func (e *env) unpublish(id string) error {
	_, err := e.node.NodeUnpublishVolume(e.ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: e.target(id)})
	return err
}

func (e *env) cpublish(id, nodeID string) error {
	_, err := e.ctrl.ControllerPublishVolume(e.ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id,
		NodeId: nodeID, VolumeCapability: rw})
	return err
}

func (e *env) cunpublish(id, nodeID string) error {
	_, err := e.ctrl.ControllerUnpublishVolume(e.ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: nodeID})
	return err
}

func code(err error) codes.Code { return status.Code(err) }
