package messages

import "testing"

func TestNodeVar(t *testing.T) {
	n := &Node{ID: "n-1", Name: "host-1", Datacenter: "dc2", Region: "eu", NodeClass: "gpu", NodePool: "batch",
		Attributes: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64"}, Meta: map[string]string{"rack": "r7"}}
	for name, want := range map[string]string{
		"node.unique.id": "n-1", "node.unique.name": "host-1", "node.datacenter": "dc2", "node.region": "eu",
		"node.class": "gpu", "node.pool": "batch", "attr.kernel.name": "linux", "attr.cpu.arch": "amd64", "meta.rack": "r7",
		`meta["rack"]`: "r7", `attr["kernel.name"]`: "linux",
	} {
		if got, ok := NodeVar(n, name); !ok || got != want {
			t.Errorf("NodeVar(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"node.nope", "attr.nope", "meta.nope", "NOMAD_ALLOC_ID", "", `meta["rack"`} {
		if got, ok := NodeVar(n, name); ok {
			t.Errorf("NodeVar(%q) = %q, true; want not found", name, got)
		}
	}
	if _, ok := NodeVar(nil, "node.unique.id"); ok {
		t.Error("a nil node (not known yet) answers nothing")
	}
}
