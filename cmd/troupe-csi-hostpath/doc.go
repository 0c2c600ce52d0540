// Command troupe-csi-hostpath runs the hostpath CSI plugin
// (runtime/csi/hostpath) on a unix socket until SIGTERM or SIGINT. Jobs
// run it as a CSI plugin task:
//
//	troupe-csi-hostpath -endpoint unix:///csi/csi.sock -root /var/lib/hostpath \
//	    -node-id "${node.unique.id}" -mode monolith
//
// -topology zone=a[,rack=r1] sets the node's accessible topology: NodeGetInfo
// reports it, the plugin reports VOLUME_ACCESSIBILITY_CONSTRAINTS, and
// CreateVolume answers it as a volume's accessible topology when the
// request has no accessibility requirements (else the first preferred,
// or first requisite, topology it asked for).
//
// Fault flags, for tests: -fail Method[/volume]=Code:N (repeatable; N < 0
// fails forever), -latency 200ms (every RPC), -race (concurrent
// ControllerPublish/Unpublish fail), and -control unix:///path/ctl.sock,
// which serves the control API (hostpath.Control) to change faults and
// read call records while the plugin runs.
package main
