package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/csi/hostpath"
)

// TestClusterCSIControllerRouting runs the hostpath CSI plugin as a
// system job on 4 clients (1 server) and a job whose 3 allocations each
// mount their own volume, then kills two client agents. It checks the
// controller routing and the abandoned-node path of DESIGN.md's hard
// problems 1 and 2, with the plugin's own call records:
//
//   - routing: every CreateVolume and ControllerPublishVolume runs on the
//     instance on the lowest node ID, none on another;
//   - abandoned node: once a killed client (not the lowest) is down, the
//     claim of its allocation is freed through ControllerUnpublishVolume
//     on the lowest node's instance, with no NodeUnpublish on the dead node;
//   - failover: once the lowest node is down too, stopping the job frees
//     every claim through the instance on the lowest live node ID, and no
//     other instance gets a controller call.
func TestClusterCSIControllerRouting(t *testing.T) {
	cc := startCSICluster(t, 1, 4)
	begin := time.Now()
	cc.runPlugin(t)
	t.Logf("plugin healthy on 4 clients: %.1f s", time.Since(begin).Seconds())
	lowest := cc.order[0]

	vols := []string{"vol[0]", "vol[1]", "vol[2]"}
	ext := cc.create(t, vols...)
	cc.register(t, volumeJobHCL("web", len(vols), "vol", true))
	cc.waitRunning(t, "web", len(vols), settleTimeout, nil)
	taken := cc.waitTakenAndWritten(t, ext, vols)
	t.Logf("3 volumes mounted and written: %.1f s (%s)", time.Since(begin).Seconds(), describeClaims(taken))

	// (a) Routing: every controller call so far ran on the lowest node.
	for _, id := range cc.order[1:] {
		require.Empty(t, cc.calls(t, id, controllerCalls...), "controller calls on %s, not the lowest node %s",
			short(id), short(lowest))
	}
	low := cc.calls(t, lowest, controllerCalls...)
	for _, v := range vols {
		claim := taken[v][0]
		pubs := filterCalls(low, "ControllerPublishVolume", ext[v])
		require.Len(t, pubs, 1, "one publish of %s on the lowest node: %s", v, describeCalls(low))
		require.Equal(t, "OK", pubs[0].Code)
		require.Equal(t, claim.GetNodeID(), pubs[0].NodeID, "%s published to the node of its claim", v)
		require.Len(t, filterCalls(low, "CreateVolume", ext[v]), 1, "%s created on the lowest node", v)
	}

	// (b) Abandoned node: kill a client that holds a claim and is not the
	// lowest node; its controller instance elsewhere stays up.
	victim := pickVictim(cc.order, taken)
	require.NotEmpty(t, victim, "no claim on a node other than the lowest %s: %s", short(lowest), describeClaims(taken))
	var victimVols []string
	for _, v := range vols {
		if taken[v][0].GetNodeID() == victim {
			victimVols = append(victimVols, v)
		}
	}
	killedAt := time.Now()
	cc.byID[victim].Kill(t)
	cc.waitNodeStatus(t, cc.byID[victim], "down", settleTimeout)
	t.Logf("killed %s (%s, holds %v) -> down: %.1f s", cc.byID[victim].Name, short(victim), victimVols,
		time.Since(killedAt).Seconds())
	cc.waitFreed(t, settleTimeout, "the dead node's claims to be freed", vols, func(v string, c *messages.CSIVolumeClaim) bool {
		return slices.Contains(victimVols, v) && c.GetAllocationID() == taken[v][0].GetAllocationID()
	})
	t.Logf("killed %s -> claims freed: %.1f s", cc.byID[victim].Name, time.Since(killedAt).Seconds())
	low = cc.calls(t, lowest, controllerCalls...)
	for _, v := range victimVols {
		unpubs := filterCalls(low, "ControllerUnpublishVolume", ext[v])
		require.NotEmpty(t, unpubs, "no controller unpublish of %s on the lowest node: %s", v, describeCalls(low))
		require.Equal(t, "OK", unpubs[0].Code)
		require.Equal(t, victim, unpubs[0].NodeID, "%s detached from the dead node", v)
		require.True(t, unpubs[0].Start.After(killedAt), "%s detached before its node died", v)
	}
	// The dead node's plugin still runs (only its agent died): nobody
	// asked it to unmount anything.
	require.Empty(t, cc.calls(t, victim, "NodeUnpublishVolume", "NodeUnstageVolume"),
		"node unpublish on the dead node %s", short(victim))
	for _, id := range cc.order[1:] {
		require.Empty(t, cc.calls(t, id, controllerCalls...), "controller calls on %s", short(id))
	}

	// (c) Failover: kill the lowest node; once it is down, stop the job.
	// Let the claims settle first (a replacement for the lost allocation
	// may be claiming the freed volume), so that the ones to free are
	// known: each taken, published, and its allocation running.
	var before map[string][]*messages.CSIVolumeClaim
	cc.eventually(t, settleTimeout, "claims to settle before the second kill", func() (bool, string) {
		claims, err := cc.claims(vols...)
		if err != nil {
			return false, err.Error()
		}
		allocs, err := cc.jobAllocs("web")
		if err != nil {
			return false, err.Error()
		}
		status := map[string]string{}
		for _, a := range allocs {
			status[a.ID] = a.ClientStatus
		}
		before = claims
		for _, cs := range before {
			for _, c := range cs {
				if c.GetState() != "taken" || !c.GetControllerPublished() || status[c.GetAllocationID()] != "running" {
					return false, describeClaims(claims) + " " + describeAllocs(allocs)
				}
			}
		}
		return true, ""
	})
	t.Logf("claims before the second kill: %s", describeClaims(before))
	killedLowAt := time.Now()
	cc.byID[lowest].Kill(t)
	cc.waitNodeStatus(t, cc.byID[lowest], "down", settleTimeout)
	t.Logf("killed %s (lowest, %s) -> down: %.1f s", cc.byID[lowest].Name, short(lowest), time.Since(killedLowAt).Seconds())
	_, _, err := cc.server().API.Jobs().Deregister("web", false, nil)
	require.NoError(t, err)
	cc.waitFreed(t, settleTimeout, "every claim to be freed", vols, nil)
	t.Logf("killed the lowest node -> all claims freed: %.1f s", time.Since(killedLowAt).Seconds())

	var live []string
	for _, id := range cc.order {
		if id != lowest && id != victim {
			live = append(live, id)
		}
	}
	next := live[0]
	nextCalls := cc.calls(t, next, controllerCalls...)
	t.Logf("controller calls on the lowest live node %s: %s", short(next), describeCalls(nextCalls))
	for _, c := range nextCalls {
		require.True(t, c.Start.After(killedLowAt), "%s on %s before the lowest node died", c.Method, short(next))
		require.Equal(t, "OK", c.Code, "%s", describeCalls(nextCalls))
	}
	for _, c := range cc.calls(t, lowest, controllerCalls...) {
		require.True(t, c.Start.Before(killedLowAt), "%s on the dead lowest node after it died", c.Method)
	}
	for _, id := range append([]string{victim}, live[1:]...) {
		require.Empty(t, cc.calls(t, id, controllerCalls...), "controller calls on %s, not the lowest live node %s",
			short(id), short(next))
	}
	for v, cs := range before {
		for _, c := range cs {
			// A replacement may claim the volume again later: look for the
			// detach from this claim's node.
			var detach *hostpath.Call
			for _, u := range filterCalls(nextCalls, "ControllerUnpublishVolume", ext[v]) {
				if u.NodeID == c.GetNodeID() {
					detach = &u
					break
				}
			}
			require.NotNil(t, detach, "claim %s of %s on %s not detached through %s: %s", short(c.GetAllocationID()), v,
				short(c.GetNodeID()), short(next), describeCalls(nextCalls))
			nodeSide := filterCalls(cc.calls(t, c.GetNodeID(), "NodeUnpublishVolume"), "NodeUnpublishVolume", ext[v])
			if c.GetNodeID() == lowest {
				for _, n := range nodeSide {
					require.True(t, n.Start.Before(killedLowAt), "node unpublish of %s on the dead lowest node", v)
				}
				continue
			}
			gated := slices.ContainsFunc(nodeSide, func(n hostpath.Call) bool {
				return n.Code == "OK" && !n.End.After(detach.Start)
			})
			require.True(t, gated, "controller detach of %s before a node unpublish on live node %s succeeded: %s",
				v, short(c.GetNodeID()), describeCalls(nodeSide))
		}
	}
	t.Logf("total: %.1f s", time.Since(begin).Seconds())
}

// waitTakenAndWritten waits until each volume has one claim, taken, and
// holds the file its allocation's task wrote, and returns the claims.
func (cc *csiCluster) waitTakenAndWritten(t *testing.T, ext map[string]string, vols []string) map[string][]*messages.CSIVolumeClaim {
	t.Helper()
	var out map[string][]*messages.CSIVolumeClaim
	cc.eventually(t, settleTimeout, "each volume taken and written by its allocation", func() (bool, string) {
		claims, err := cc.claims(vols...)
		if err != nil {
			return false, err.Error()
		}
		for _, v := range vols {
			cs := claims[v]
			if len(cs) != 1 || cs[0].GetState() != "taken" {
				return false, describeClaims(claims)
			}
			b, err := os.ReadFile(filepath.Join(cc.root, ext[v], "written"))
			if err != nil || strings.TrimSpace(string(b)) != cs[0].GetAllocationID() {
				return false, fmt.Sprintf("%s: written %q (%v): %s", v, b, err, describeClaims(claims))
			}
		}
		out = claims
		return true, ""
	})
	return out
}

// pickVictim is a node, not the lowest, that holds a claim: the second
// lowest when it holds one (so that the failover must skip a down node).
func pickVictim(order []string, claims map[string][]*messages.CSIVolumeClaim) string {
	holds := map[string]bool{}
	for _, cs := range claims {
		for _, c := range cs {
			holds[c.GetNodeID()] = true
		}
	}
	for _, id := range order[1:] {
		if holds[id] {
			return id
		}
	}
	return ""
}

// filterCalls keeps the calls of method about volumeID.
func filterCalls(calls []hostpath.Call, method, volumeID string) []hostpath.Call {
	var out []hostpath.Call
	for _, c := range calls {
		if c.Method == method && c.VolumeID == volumeID {
			out = append(out, c)
		}
	}
	return out
}
