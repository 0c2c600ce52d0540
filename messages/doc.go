// Package messages holds troupe's protobuf messages: the domain objects
// (jobs, allocations, evaluations, nodes) in Nomad's JSON shape, the raft
// commands that change replicated state, and the messages actors exchange.
//
// Field names are PascalCase on purpose: protoc-gen-go keeps them and writes
// them into the json struct tags, so encoding/json of these structs speaks
// Nomad's /v1 JSON and github.com/hashicorp/nomad/api can decode it.
// Durations are int64 nanoseconds; times a Nomad client decodes as time.Time
// are RFC 3339 strings.
//
// Write these types to JSON with MarshalJSON (or AppendJSON), not
// json.Marshal: the generated tags say omitempty, and a zero count,
// version or attempts must still be written, for Nomad's client and for
// jobspec.ParseJSON. It is the one encoder for them: the HTTP API's
// responses and jobspec.EncodeJSON both use it.
// Beside the generated code sit the hand-written helpers: status.go holds
// every status value (allocation client and desired statuses, evaluation,
// node, job and task statuses) as Nomad's API spells them, with the one
// family of terminal predicates (Allocation.ClientTerminalStatus,
// ServerTerminalStatus, TerminalStatus; Evaluation.TerminalStatus);
// claim_state.go the ClaimState enum of a volume claim, read and written
// through CSIVolumeClaim.ClaimState and SetClaimState; error_code.go the
// ErrorCode of an Error (NewError, Errorf, Error.ErrorCode);
// controller_code.go the gRPC code a ControllerResponse carries
// (ControllerResult, StatusCode).
//
// Regenerate with `go generate ./messages` (needs protoc and protoc-gen-go;
// scripts/setup.sh -proto installs them).
package messages

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative job.proto eval.proto node.proto alloc.proto raft.proto actors.proto cluster.proto volume.proto volume_rpc.proto operator.proto probe.proto gc.proto variables.proto namespace.proto submission.proto template.proto template_rpc.proto service.proto dispatch.proto deployment.proto acl.proto acl_rpc.proto federation.proto identity.proto identity_rpc.proto multiregion_rpc.proto
