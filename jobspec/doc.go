// Package jobspec turns job files into *messages.Job: HCL files in a
// Nomad-like subset (hashicorp/hcl/v2) and JSON in the shape of Nomad's
// /v1/jobs API. It also fills Nomad's defaults and validates jobs.
//
// The usual sequence, for the CLI and the HTTP API alike:
//
//	job, err := jobspec.Parse("web.hcl", src) // or jobspec.ParseJSON(body)
//	if err != nil { ... }                     // *ParseError: file:line:col: what is wrong
//	jobspec.Canonicalize(job)                 // namespace, region, policies, resources...
//	if err := jobspec.Validate(job); err != nil {
//		// *ValidationError: every problem, one per line, each with its path
//	}
//
// Runtime interpolations ("${attr.kernel.name}", "${node.unique.name}",
// "${meta.rack}", "${device.model}", "${env.X}", "${NOMAD_ALLOC_ID}",
// "${TROUPE_...}") are not evaluated: the parser returns them verbatim for
// the scheduler and the client to resolve. Input variables (variable
// blocks, var.NAME) take their values from ParseWithVariables; other
// variables and function calls are errors.
//
// Presence matters for a few defaults that a proto field cannot express (an
// absent group count is 1, an explicit 0 stays 0; a restart block that sets
// only some fields keeps the defaults for the others). The parsers apply
// those right after decoding; Canonicalize fills the rest and is
// idempotent. A job built in code should set Count itself. To send a parsed
// job to the HTTP API, use EncodeJSON, not json.Marshal: the generated
// struct tags drop zero values (count = 0, attempts = 0) that ParseJSON
// would then read as absent.
//
// Scoring blocks are Nomad's: affinity (attribute, operator, value,
// weight -100..100, not 0) at job, group and task level and inside a
// device block, and spread (attribute, weight 1..100, target "value" {
// percent = N } with percents adding up to at most 100) at job and group
// level. Canonicalize gives affinities the operator "=" and the weight 50,
// and spreads the weight 50, when they leave them out.
//
// A task's csi_plugin block (id, type monolith|controller|node, mount_dir,
// stage_publish_base_dir, health_timeout) lands in Task.CSIPluginConfig;
// Canonicalize fills Nomad's defaults (/csi, /local/csi, 30s).
//
// A task's artifact blocks (artifact.go: source, destination, mode
// any|file|dir, insecure, options { checksum = "sha256:..." archive = false
// ... }, headers { ... }) land in Task.Artifacts, with Nomad's JSON names
// (GetterSource, RelativeDest, ...). Canonicalize gives mode any and the
// destination local/ (local/<file> in mode file); Validate wants a source,
// a destination that stays in the task directory, and a checksum of a
// known type (md5, sha1, sha256, sha512) with a digest of its length.
// chown is refused.
//
// A task's identity blocks (identity.go: name, aud, env, file, ttl) land
// in Task.Identity (the unnamed one, or "default") and Task.Identities
// (named ones); Validate wants names of letters, digits, '_' and '-', once
// each, and no negative ttl. change_mode, change_signal, filepath,
// service_name and extra_claims are refused.
//
// Volume specification files, for `troupe volume register|create`, have
// their own parser (Nomad's format; type = "csi" only):
//
//	vol, err := jobspec.ParseVolume("vol.hcl", src) // or ParseVolumeJSON(body)
//	jobspec.CanonicalizeVolume(vol)                 // namespace "default"
//	err = jobspec.ValidateVolume(vol, create)       // create: external_id not needed
//
// ParseVolumesJSON reads Nomad's {"Volumes": [...]} bodies with several
// volumes; ParseSize reads sizes such as "10GiB".
//
// Node pool specification files, for `troupe node pool apply`, are
// Nomad's `node_pool "name" { description = "..." meta { k = "v" } }`:
// ParseNodePool reads them, ParseNodePoolJSON their JSON form and the
// body of PUT /v1/node/pools. Nomad's scheduler_config and
// node_identity_ttl are refused by name.
//
// Nomad job fields troupe does not implement yet are refused, never
// ignored. nomadFields lists every field of Nomad's api.Job, TaskGroup,
// Task and the structs nested in honoured fields as honoured, output (set
// by the server) or refused; ParseJSON returns an *UnsupportedError
// (ErrUnsupported) naming each refused field that is set, with its path
// (`job "x": group "web": task "t": Templates is not supported yet`).
// Zero values, which Nomad's client sends for unset fields, pass, and so
// do the defaults api.Job.Canonicalize fills in (update strategy,
// ephemeral disk). In HCL, the blocks and arguments of hclRefused
// (reschedule, vault, consul, ui, ...) are errors naming them at their
// line.
//
// A periodic block (periodic.go) is parsed and validated here: cron
// expressions with hashicorp/cronexpr, in the block's time zone;
// PeriodicNext is the launch time the leader's dispatcher uses. So are a
// parameterized block (parameterized.go: payload optional, Nomad's
// default, required or forbidden; meta_required, meta_optional; batch
// jobs only) and a task's dispatch_payload { file }, a path that must
// stay inside the task's local/ directory.
//
// A multiregion block (multiregion.go, Nomad Enterprise's) is parsed in
// HCL and JSON and validated: regions named once, counts not negative,
// on_failure "", "fail_all" or "fail_local". ForRegion builds the copy a
// region registers (its count over every group's, its datacenters, node
// pool and meta over the job's). The registering server sends every
// region its copy at once; a staged strategy (max_parallel below the
// number of regions) and on_failure "fail_all"/"fail_local" are refused
// as not supported yet.
//
// Service and check blocks (service.go, validate_service.go), group and
// task level, provider "nomad" (unset means it; "consul" is refused):
// Canonicalize names them as Nomad does (job-group[-task], `service:
// "name" check`), merges a service's check_restart into its checks and
// fills address mode auto and the http method and protocol; Validate
// applies Nomad's rules (interval and timeout of at least 1s, a port
// label that the group's network defines, an http path, a task for a
// group's script check).
//
// Errors wrap ErrParse or ErrInvalid (an *UnsupportedError wraps ErrParse
// and ErrUnsupported).
package jobspec
