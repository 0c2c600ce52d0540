package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/troupe-dev/troupe/messages"
)

// volumeOpTimeout bounds an operator's volume request end to end.
const volumeOpTimeout = 3 * time.Minute

// VolumeOp sends an operator's volume request (create, delete, detach,
// deregister) to the leader's volume manager.
func (a *Agent) VolumeOp(ctx context.Context, req *messages.VolumeOpRequest) (*messages.VolumeOpResponse, error) {
	// create and delete wait for the plugin's controller, which may take
	// minutes (a create from a snapshot): do not give up at the default.
	ctx, cancel := context.WithTimeout(ctx, volumeOpTimeout)
	defer cancel()
	resp, err := a.conn.call(ctx, req)
	if r, ok := resp.(*messages.VolumeOpResponse); ok && r.GetError() != nil {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*messages.VolumeOpResponse)
	if !ok {
		return nil, fmt.Errorf("agent: volume %s: unexpected reply %T", req.GetOp(), resp)
	}
	// Read your writes on a follower too: its replica has the change.
	a.waitApplied(ctx, r.GetIndex())
	return r, nil
}

// Claim implements alloc.VolumeClaimer, with the node's secret.
func (c *serverConn) Claim(ctx context.Context, req *messages.VolumeClaimRequest) (*messages.VolumeClaimResponse, error) {
	req.NodeSecretID = c.a.nodeSecret
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, err
	}
	r, ok := resp.(*messages.VolumeClaimResponse)
	if !ok {
		return nil, fmt.Errorf("agent: claim: unexpected reply %T", resp)
	}
	return r, nil
}

// NodeDetached implements alloc.VolumeClaimer, with the node's secret.
func (c *serverConn) NodeDetached(ctx context.Context, req *messages.VolumeNodeDetachedRequest) error {
	req.NodeSecretID = c.a.nodeSecret
	_, err := c.call(ctx, req)
	return err
}
