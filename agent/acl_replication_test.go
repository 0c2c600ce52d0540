package agent

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/messages"
)

// TestACLReplication: with ACLs on and "global" authoritative, eu's
// leader copies global's policies and global tokens, not its local
// tokens; a global token works against eu's API; a change and a deletion
// at global follow; eu's own local token stays.
func TestACLReplication(t *testing.T) {
	skipTwoAgentsUnderRace(t)
	acls := func(c *Config) { c.ACLEnabled = true }
	global := startRegionServer(t, "global", acls)
	nc := func(a *Agent, token string) *nomad.Client {
		c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr(), SecretID: token,
			HttpClient: &http.Client{Timeout: 10 * time.Second}})
		require.NoError(t, err)
		return c
	}
	root, _, err := nc(global, "").ACLTokens().Bootstrap(nil)
	require.NoError(t, err)
	g := nc(global, root.SecretID)
	_, err = g.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "readjobs", Rules: `namespace "default" { policy = "read" }`}, nil)
	require.NoError(t, err)
	globalTok, _, err := g.ACLTokens().Create(&nomad.ACLToken{Name: "reader", Type: "client", Policies: []string{"readjobs"}, Global: true}, nil)
	require.NoError(t, err)
	localTok, _, err := g.ACLTokens().Create(&nomad.ACLToken{Name: "here-only", Type: "client", Policies: []string{"readjobs"}}, nil)
	require.NoError(t, err)

	eu := startRegionServer(t, "eu", acls, func(c *Config) {
		c.AuthoritativeRegion, c.ReplicationToken, c.ACLReplicationInterval = "global", root.SecretID, 100*time.Millisecond
	})
	n, err := nc(eu, root.SecretID).Agent().Join("127.0.0.1:" + strconv.Itoa(global.cfg.WANPort))
	require.Error(t, err, "eu has no ACLs yet: the root token is not known there")
	require.Zero(t, n)
	_, err = eu.JoinWAN([]string{"127.0.0.1:" + strconv.Itoa(global.cfg.WANPort)})
	require.NoError(t, err)

	require.Eventually(t, func() bool {
		s := eu.Store().Snapshot()
		return s.ACLPolicyByName("readjobs") != nil && s.ACLTokenByAccessor(globalTok.AccessorID) != nil &&
			s.ACLTokenByAccessor(root.AccessorID) != nil
	}, 20*time.Second, 20*time.Millisecond, "policies and global tokens reach eu")
	require.Nil(t, eu.Store().Snapshot().ACLTokenByAccessor(localTok.AccessorID), "a local token stays in its region")
	_, _, err = nc(eu, globalTok.SecretID).Jobs().List(nil)
	require.NoError(t, err, "the global token works in eu")
	_, _, err = nc(eu, localTok.SecretID).Jobs().List(nil)
	require.Error(t, err, "global's local token means nothing in eu")

	e := nc(eu, root.SecretID)
	euLocal, _, err := e.ACLTokens().Create(&nomad.ACLToken{Name: "eu-only", Type: "client", Policies: []string{"readjobs"}}, nil)
	require.NoError(t, err)
	_, err = g.ACLPolicies().Upsert(&nomad.ACLPolicy{Name: "readjobs", Description: "v2", Rules: `namespace "default" { policy = "read" }`}, nil)
	require.NoError(t, err)
	_, err = g.ACLTokens().Delete(globalTok.AccessorID, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s := eu.Store().Snapshot()
		p := s.ACLPolicyByName("readjobs")
		return p != nil && p.GetDescription() == "v2" && s.ACLTokenByAccessor(globalTok.AccessorID) == nil
	}, 20*time.Second, 20*time.Millisecond, "a change and a deletion follow")
	require.NotNil(t, eu.Store().Snapshot().ACLTokenByAccessor(euLocal.AccessorID), "eu's local token is kept")
}

// TestACLReplicationRefusesNonManagement: the authoritative region answers
// only a management token.
func TestACLReplicationRefusesNonManagement(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Dev, cfg.ACLEnabled = true, true
	a := startAgent(t, cfg)
	defer a.Shutdown()
	resp := a.answerReplicateACLs(&messages.ReplicateACLs{ReplicationToken: "nope"})
	require.NotNil(t, resp.GetError())
	require.Contains(t, resp.GetError().GetMessage(), "not a management token")
}
