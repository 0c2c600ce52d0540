package membership

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hashicorp/memberlist"
)

// Roles a member can have.
const (
	RoleServer = "server"
	RoleClient = "client"
)

// MetaMaxSize is the largest encoded metadata memberlist carries.
const MetaMaxSize = memberlist.MetaMaxSize

// metaVersion is written into every encoded Meta; decoders accept newer
// versions and ignore fields they do not know.
const metaVersion = 1

// Meta is what a member tells the others about itself.
type Meta struct {
	Role       string // RoleServer or RoleClient
	Region     string // every member of one memberlist is in the same region
	Datacenter string
	NodeID     string // stable across restarts
	NodeName   string
	RPCAddr    string // host:port of the gRPC actor transport
	RaftAddr   string // host:port of a server's raft transport
	HTTPAddr   string // host:port of the HTTP API
	Build      string // version of the agent
	// Voter marks a server that takes part in raft votes.
	Voter bool
	// BootstrapExpect is the number of servers this server waits for before
	// bootstrapping raft; 0 when it does not bootstrap.
	BootstrapExpect int
	// Leader marks the server that leads its region's raft (gossiped in
	// the WAN pool, where the servers of other regions look for it).
	Leader bool
	// WANAddr is a server's WAN pool address (host:port), gossiped in
	// its region's LAN pool: a server that sees a peer in the WAN pool
	// it is not in itself joins through it (federation's flood join).
	WANAddr string
}

// wireMeta is Meta as encoded on the wire: short keys, empty fields left out.
type wireMeta struct {
	V          int    `json:"v"`
	Role       string `json:"ro,omitempty"`
	Region     string `json:"rg,omitempty"`
	Datacenter string `json:"dc,omitempty"`
	NodeID     string `json:"id,omitempty"`
	NodeName   string `json:"nm,omitempty"`
	RPCAddr    string `json:"rpc,omitempty"`
	RaftAddr   string `json:"raft,omitempty"`
	HTTPAddr   string `json:"http,omitempty"`
	Build      string `json:"b,omitempty"`
	Voter      bool   `json:"vt,omitempty"`
	Expect     int    `json:"be,omitempty"`
	Leaving    bool   `json:"lv,omitempty"`
	Leader     bool   `json:"ld,omitempty"`
	WANAddr    string `json:"wan,omitempty"`
}

// Validate checks that the metadata names a member fully and consistently.
func (m Meta) Validate() error {
	switch {
	case m.Role != RoleServer && m.Role != RoleClient:
		return fmt.Errorf("%w: role %q is neither %q nor %q", ErrInvalidMeta, m.Role, RoleServer, RoleClient)
	case m.Region == "":
		return fmt.Errorf("%w: region is empty", ErrInvalidMeta)
	case m.Datacenter == "":
		return fmt.Errorf("%w: datacenter is empty", ErrInvalidMeta)
	case m.NodeID == "":
		return fmt.Errorf("%w: node ID is empty", ErrInvalidMeta)
	case m.NodeName == "":
		return fmt.Errorf("%w: node name is empty", ErrInvalidMeta)
	case m.BootstrapExpect < 0:
		return fmt.Errorf("%w: bootstrap_expect %d is negative", ErrInvalidMeta, m.BootstrapExpect)
	case m.Role == RoleClient && (m.Voter || m.BootstrapExpect > 0):
		return fmt.Errorf("%w: client %s cannot be a raft voter or bootstrap servers", ErrInvalidMeta, m.NodeName)
	}
	return nil
}

// checkChange refuses an update that changes the member's identity.
func (m Meta) checkChange(next Meta) error {
	fields := []struct{ name, old, new string }{
		{"role", m.Role, next.Role},
		{"region", m.Region, next.Region},
		{"node ID", m.NodeID, next.NodeID},
		{"node name", m.NodeName, next.NodeName},
	}
	for _, f := range fields {
		if f.old != f.new {
			return fmt.Errorf("%w: %s cannot change from %q to %q", ErrInvalidMeta, f.name, f.old, f.new)
		}
	}
	return nil
}

// Tags flattens the metadata for the HTTP API (Nomad's agent members shape).
// Empty values are left out.
func (m Meta) Tags() map[string]string {
	tags := map[string]string{}
	put := func(k, v string) {
		if v != "" {
			tags[k] = v
		}
	}
	put("role", m.Role)
	put("region", m.Region)
	put("dc", m.Datacenter)
	put("id", m.NodeID)
	put("name", m.NodeName)
	put("rpc_addr", m.RPCAddr)
	put("raft_addr", m.RaftAddr)
	put("http_addr", m.HTTPAddr)
	put("build", m.Build)
	if m.Role == RoleServer {
		put("voter", strconv.FormatBool(m.Voter))
		put("bootstrap_expect", strconv.Itoa(m.BootstrapExpect))
	}
	return tags
}

// encodeMeta encodes m (with the leaving flag) and checks the size limit.
func encodeMeta(m Meta, leaving bool) ([]byte, error) {
	buf, err := json.Marshal(wireMeta{
		V: metaVersion, Role: m.Role, Region: m.Region, Datacenter: m.Datacenter,
		NodeID: m.NodeID, NodeName: m.NodeName, RPCAddr: m.RPCAddr, RaftAddr: m.RaftAddr, HTTPAddr: m.HTTPAddr,
		Build: m.Build, Voter: m.Voter, Expect: m.BootstrapExpect, Leaving: leaving, Leader: m.Leader, WANAddr: m.WANAddr,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMeta, err)
	}
	if limit := metaLimit(leaving); len(buf) > limit {
		return nil, fmt.Errorf("%w: %d bytes encoded, limit is %d (memberlist's %d less %d kept for the leave flag)",
			ErrMetaTooLarge, len(buf), limit, MetaMaxSize, leavingOverhead)
	}
	return buf, nil
}

// leavingOverhead is what the leave flag adds to an encoded Meta. Metadata
// is checked against the limit less this, so that Leave cannot overflow it.
const leavingOverhead = len(`,"lv":true`)

func metaLimit(leaving bool) int {
	if leaving {
		return MetaMaxSize
	}
	return MetaMaxSize - leavingOverhead
}

// decodeMeta decodes what encodeMeta wrote; it also returns the leaving flag.
func decodeMeta(buf []byte) (Meta, bool, error) {
	var w wireMeta
	if err := json.Unmarshal(buf, &w); err != nil {
		return Meta{}, false, fmt.Errorf("%w: %w", ErrInvalidMeta, err)
	}
	if w.V < 1 {
		return Meta{}, false, fmt.Errorf("%w: no encoding version", ErrInvalidMeta)
	}
	m := Meta{
		Role: w.Role, Region: w.Region, Datacenter: w.Datacenter, NodeID: w.NodeID,
		NodeName: w.NodeName, RPCAddr: w.RPCAddr, RaftAddr: w.RaftAddr, HTTPAddr: w.HTTPAddr, Build: w.Build,
		Voter: w.Voter, BootstrapExpect: w.Expect, Leader: w.Leader, WANAddr: w.WANAddr,
	}
	return m, w.Leaving, nil
}
