package acl

import "testing"

// TestVolumeMounts is the whole table of Nomad's mount rules: a read-only
// host volume mount needs host_volume read or write, a read-write one
// write; deny and a closer rule win; a CSI mount needs csi-mount-volume
// and plugin read, read-only or not.
func TestVolumeMounts(t *testing.T) {
	for _, tc := range []struct {
		name, rules string
		host        string // host volume source mounted
		readOnly    bool
		want        bool
	}{
		{"no rule", `namespace "default" { policy = "write" }`, "data", false, false},
		{"no rule, read-only", `namespace "default" { policy = "write" }`, "data", true, false},
		{"write policy", `host_volume "data" { policy = "write" }`, "data", false, true},
		{"write policy, read-only", `host_volume "data" { policy = "write" }`, "data", true, true},
		{"read policy", `host_volume "data" { policy = "read" }`, "data", false, false},
		{"read policy, read-only", `host_volume "data" { policy = "read" }`, "data", true, true},
		{"another volume's rule", `host_volume "logs" { policy = "write" }`, "data", true, false},
		{"glob", `host_volume "shared-*" { policy = "write" }`, "shared-a", false, true},
		{"capability mount-readwrite", `host_volume "data" { capabilities = ["mount-readwrite"] }`, "data", true, true},
		{"capability mount-readonly", `host_volume "data" { capabilities = ["mount-readonly"] }`, "data", false, false},
		{"deny", "host_volume \"data\" { policy = \"write\" }\nhost_volume \"*\" { policy = \"read\" }\nhost_volume \"data\" { policy = \"deny\" }", "data", true, false},
		{"closer rule", "host_volume \"*\" { policy = \"write\" }\nhost_volume \"secret\" { policy = \"read\" }", "secret", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Compile(mustParse(t, tc.rules))
			if got := a.AllowHostVolumeMount(tc.host, tc.readOnly); got != tc.want {
				t.Fatalf("AllowHostVolumeMount(%q, read-only %v) = %v, want %v", tc.host, tc.readOnly, got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, rules string
		want        bool
	}{
		{"namespace write, no plugin rule", `namespace "default" { policy = "write" }`, false},
		{"namespace write, plugin read", "namespace \"default\" { policy = \"write\" }\nplugin { policy = \"read\" }", true},
		{"csi-mount-volume, plugin read", "namespace \"default\" { capabilities = [\"csi-mount-volume\"] }\nplugin { policy = \"read\" }", true},
		{"csi-write-volume only", "namespace \"default\" { capabilities = [\"csi-write-volume\"] }\nplugin { policy = \"read\" }", false},
		{"plugin list", "namespace \"default\" { capabilities = [\"csi-mount-volume\"] }\nplugin { policy = \"list\" }", false},
		{"namespace read", "namespace \"default\" { policy = \"read\" }\nplugin { policy = \"read\" }", false},
		{"another namespace", "namespace \"prod\" { policy = \"write\" }\nplugin { policy = \"read\" }", false},
	} {
		t.Run("csi: "+tc.name, func(t *testing.T) {
			if got := Compile(mustParse(t, tc.rules)).AllowCSIMount("default"); got != tc.want {
				t.Fatalf("AllowCSIMount = %v, want %v", got, tc.want)
			}
		})
	}
	if !Management.AllowHostVolumeMount("any", false) || !Management.AllowCSIMount("any") {
		t.Fatal("a management ACL mounts anything")
	}
	var none *ACL
	if none.AllowHostVolumeMount("data", true) || none.AllowCSIMount("default") {
		t.Fatal("a nil ACL mounts nothing")
	}
}
