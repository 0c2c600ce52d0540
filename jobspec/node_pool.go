package jobspec

import (
	"encoding/json"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/troupe-dev/troupe/messages"
)

var (
	nodePoolAttrs = []attrSpec{{name: "description", field: "Description"}}
	// nodePoolSchema has Nomad's scheduler_config block and
	// node_identity_ttl attribute so that they are refused by name.
	nodePoolSchema = func() *hcl.BodySchema {
		s := schemaOf(nodePoolAttrs, blockSpec{name: "meta"}, blockSpec{name: "scheduler_config"})
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: "node_identity_ttl"})
		return s
	}()
	nodePoolFileSchema = schemaOf(nil, blockSpec{"node_pool", []string{"name"}})
)

// Nomad node pool settings troupe does not implement, refused by name.
const (
	unsupportedPoolScheduler = "the scheduler uses the cluster's configuration for every pool"
	unsupportedPoolIdentity  = "troupe has no node identities"
)

// ParseNodePool decodes a node pool specification file, as `troupe node
// pool apply` reads it (Nomad's format):
//
//	node_pool "dev" {
//	  description = "Nodes for the development environment."
//	  meta {
//	    owner = "sre"
//	  }
//	}
//
// Nomad's scheduler_config block and node_identity_ttl are refused by
// name. Errors are *ParseError; the pool's name and description are the
// server's to check. ParseNodePoolJSON reads the JSON form.
func ParseNodePool(filename string, src []byte) (*messages.NodePool, error) {
	file, d, err := parseHCLFile(filename, src)
	if err != nil {
		return nil, err
	}
	c := d.content(file.Body, nodePoolFileSchema)
	var pool *messages.NodePool
	if b := d.single(c, "node_pool"); b != nil {
		pool = d.nodePool(b)
	} else if !d.diags.HasErrors() {
		d.errorf(file.Body.MissingItemRange(), "Missing node_pool block", "A node pool file must contain one node_pool block.")
	}
	if d.diags.HasErrors() {
		return nil, parseErrorOf(filename, d.diags)
	}
	return pool, nil
}

func (d *hclDecoder) nodePool(b *hcl.Block) *messages.NodePool {
	p := &messages.NodePool{Name: b.Labels[0]}
	c := d.content(b.Body, nodePoolSchema)
	d.decodeAttrs(c.Attributes, nodePoolAttrs, p)
	if m := d.single(c, "meta"); m != nil {
		p.Meta = d.stringMap(m)
	}
	if sb := d.single(c, "scheduler_config"); sb != nil {
		d.errorf(sb.DefRange, "Unsupported block", "scheduler_config is not supported: %s.", unsupportedPoolScheduler)
	}
	if a := c.Attributes["node_identity_ttl"]; a != nil {
		d.errorf(a.NameRange, "Unsupported argument", "node_identity_ttl is not supported: %s.", unsupportedPoolIdentity)
	}
	return p
}

// ParseNodePoolJSON reads a NodePool in the API's JSON ({"Name": ...,
// "Description": ..., "Meta": {...}}), as a node pool file in JSON or the
// body of PUT /v1/node/pools that Nomad's client sends (with
// "NodeIdentityTTL": ""). Nomad's SchedulerConfiguration and a
// NodeIdentityTTL other than "" or 0 are refused by name; the server's
// indexes are dropped.
func ParseNodePoolJSON(src []byte) (*messages.NodePool, error) {
	if err := CheckJSON(src); err != nil {
		return nil, err
	}
	var extra struct {
		NodeIdentityTTL        any
		SchedulerConfiguration any
	}
	p := &messages.NodePool{}
	for _, v := range []any{&extra, p} {
		if err := json.Unmarshal(src, v); err != nil {
			return nil, jsonError(src, err)
		}
	}
	switch ttl := extra.NodeIdentityTTL; {
	case extra.SchedulerConfiguration != nil:
		return nil, &ParseError{Detail: fmt.Sprintf("NodePool.SchedulerConfiguration is not supported: %s", unsupportedPoolScheduler)}
	case ttl != nil && ttl != "" && ttl != float64(0):
		return nil, &ParseError{Detail: fmt.Sprintf("NodePool.NodeIdentityTTL is not supported: %s", unsupportedPoolIdentity)}
	}
	p.CreateIndex, p.ModifyIndex = 0, 0
	return p, nil
}
