// Command troupe-csi-hostpath runs the hostpath CSI plugin
// (runtime/csi/hostpath) on a unix socket until SIGTERM or SIGINT. Jobs
// run it as a CSI plugin task:
//
//	troupe-csi-hostpath -endpoint unix:///csi/csi.sock -root /var/lib/hostpath \
//	    -node-id "${node.unique.id}" -mode monolith
//
// Fault flags, for tests: -fail Method[/volume]=Code:N (repeatable; N < 0
// fails forever), -latency 200ms (every RPC), -race (concurrent
// ControllerPublish/Unpublish fail), and -control unix:///path/ctl.sock,
// which serves the control API (hostpath.Control) to change faults and
// read call records while the plugin runs.
package main
