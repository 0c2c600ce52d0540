package jobspec

// nomadFields says, for every field of Nomad's job API structs that
// troupe reads (github.com/hashicorp/nomad/api: Job, TaskGroup, Task and
// the structs nested in the honoured ones), what troupe does with it. It is
// the one place that lists them: ParseJSON refuses a job that sets a
// refused field, and TestNomadFieldsCoverNomadAPI walks Nomad's api.Job
// with reflection so that a field Nomad adds later fails the test until it
// is listed here.
var nomadFields = map[string]map[string]fieldRule{
	"Job": {
		"ID": honoured, "Name": honoured, "Namespace": honoured, "Region": honoured,
		"Type": honoured, "Priority": honoured, "Datacenters": honoured, "NodePool": honoured,
		"Meta": honoured, "Stop": honoured,
		"Constraints": nested("Constraint"), "Affinities": nested("Affinity"),
		"Spreads": nested("Spread"), "TaskGroups": nested("TaskGroup"),
		"Status": output, "StatusDescription": output, "Stable": output, "Version": output,
		"SubmitTime": output, "CreateIndex": output, "ModifyIndex": output,
		"JobModifyIndex": output, "NomadTokenID": refused,
		"Update":           nested("UpdateStrategy"),
		"Periodic":         nested("PeriodicConfig"),
		"ParameterizedJob": nested("ParameterizedJobConfig"),
		"Multiregion":      nested("Multiregion"),
		"AllAtOnce":        refused, "Reschedule": refusedAs("a job-level Reschedule is not supported yet; set ReschedulePolicy in each group"),
		"Migrate": refusedAs("a job-level Migrate is not supported yet; set Migrate in each group"),
		"UI":      refused, "ParentID": honoured, "Dispatched": refused,
		"DispatchIdempotencyToken": refused, "Payload": refused, "ConsulNamespace": refused,
		"VaultNamespace": refused, "VersionTag": refused,
	},
	"TaskGroup": {
		"Name": honoured, "Count": honoured, "Meta": honoured, "StopAfterClientDisconnect": honoured,
		"Constraints": nested("Constraint"), "Affinities": nested("Affinity"),
		"Spreads": nested("Spread"), "Tasks": nested("Task"),
		"Volumes": nestedMap("VolumeRequest"), "RestartPolicy": nested("RestartPolicy"),
		"Disconnect": nested("DisconnectStrategy"), "ReschedulePolicy": nested("ReschedulePolicy"),
		"Migrate": nested("MigrateStrategy"), "Networks": nested("NetworkResource"),
		"EphemeralDisk": partly("EphemeralDisk"),
		"Update":        nested("UpdateStrategy"),
		"Services":      nested("Service"), "ShutdownDelay": refused, "MaxRunDuration": refused,
		"MaxClientDisconnect": refusedAs("MaxClientDisconnect is not supported; use Disconnect.LostAfter"),
		"Scaling":             refused, "Consul": refused, "PreventRescheduleOnLost": refused,
	},
	"Task": {
		"Name": honoured, "Driver": honoured, "User": honoured, "Config": honoured,
		"Env": honoured, "Meta": honoured, "KillTimeout": honoured, "KillSignal": honoured,
		"Leader": honoured, "Constraints": nested("Constraint"), "Affinities": nested("Affinity"),
		"Resources": nested("Resources"), "RestartPolicy": nested("RestartPolicy"),
		"LogConfig": nested("LogConfig"), "VolumeMounts": nested("VolumeMount"),
		"CSIPluginConfig": nested("TaskCSIPluginConfig"),
		"Lifecycle":       nested("TaskLifecycle"), "Services": nested("Service"), "Artifacts": nested("TaskArtifact"), "Vault": refused,
		"Consul": refused, "Templates": nested("Template"), "DispatchPayload": nested("DispatchPayloadConfig"),
		"ShutdownDelay": refused, "Kind": refused, "ScalingPolicies": refused,
		"Secrets": refused, "Identity": nested("WorkloadIdentity"), "Identities": nested("WorkloadIdentity"), "Actions": refused,
		"Schedule": refused,
	},
	"Multiregion":         {"Strategy": nested("MultiregionStrategy"), "Regions": nested("MultiregionRegion")},
	"MultiregionStrategy": {"MaxParallel": honoured, "OnFailure": honoured},
	"MultiregionRegion": {"Name": honoured, "Count": honoured, "Datacenters": honoured,
		"NodePool": honoured, "Meta": honoured},
	"ParameterizedJobConfig": {"Payload": honoured, "MetaRequired": honoured, "MetaOptional": honoured},
	"DispatchPayloadConfig":  {"File": honoured},
	"UpdateStrategy": {"Stagger": honoured, "MaxParallel": honoured, "HealthCheck": honoured,
		"MinHealthyTime": honoured, "HealthyDeadline": honoured, "ProgressDeadline": honoured,
		"AutoRevert": honoured, "AutoPromote": honoured, "Canary": honoured},
	"TaskArtifact": {"GetterSource": honoured, "GetterOptions": honoured, "GetterHeaders": honoured,
		"GetterMode": honoured, "GetterInsecure": honoured, "RelativeDest": honoured, "Chown": refused},
	"Template": {"SourcePath": honoured, "DestPath": honoured, "EmbeddedTmpl": honoured,
		"ChangeMode": honoured, "ChangeSignal": honoured, "Splay": honoured, "Perms": honoured,
		"Uid": honoured, "Gid": honoured, "LeftDelim": honoured, "RightDelim": honoured,
		"Envvars": honoured, "ErrMissingKey": honoured, "Once": honoured,
		"ChangeScript": nested("ChangeScript"), "Wait": refused, "VaultGrace": refused},
	"ChangeScript": {"Command": honoured, "Args": honoured, "Timeout": honoured, "FailOnError": honoured,
		"RunOnFirstRender": refused},
	"Service": {"Name": honoured, "Tags": honoured, "CanaryTags": honoured,
		"PortLabel": honoured, "AddressMode": honoured, "Address": honoured,
		"Checks": nested("ServiceCheck"), "CheckRestart": nested("CheckRestart"),
		"Meta": honoured, "TaskName": honoured, "OnUpdate": honoured,
		"Provider": fieldRule{kind: kindRefused, allow: equals(ServiceProviderNomad),
			why: `service provider "consul" is not supported; troupe registers services itself: use provider "nomad"`},
		"Cluster":           refusedUnless(equals("default")),
		"EnableTagOverride": refused, "Connect": refused, "CanaryMeta": refused,
		"TaggedAddresses": refused, "Identity": refused, "Weights": refused, "Kind": refused,
	},
	"ServiceCheck": {"Name": honoured, "Type": honoured, "Command": honoured, "Args": honoured,
		"Path": honoured, "Protocol": honoured, "PortLabel": honoured, "AddressMode": honoured,
		"Interval": honoured, "Timeout": honoured, "InitialStatus": honoured, "Notes": honoured,
		"TLSSkipVerify": honoured, "Header": honoured, "Method": honoured,
		"CheckRestart": nested("CheckRestart"), "TaskName": honoured, "Body": honoured,
		"OnUpdate": honoured, "Expose": refused, "Advertise": refused, "TLSServerName": refused,
		"GRPCService": refused, "GRPCUseTLS": refused, "SuccessBeforePassing": refused,
		"FailuresBeforeCritical": refused, "FailuresBeforeWarning": refused,
	},
	"CheckRestart": {"Limit": honoured, "Grace": honoured, "IgnoreWarnings": honoured},
	"PeriodicConfig": {"Enabled": honoured, "Spec": honoured, "Specs": honoured, "SpecType": honoured,
		"ProhibitOverlap": honoured, "TimeZone": honoured},
	"Constraint": {"LTarget": honoured, "RTarget": honoured, "Operand": honoured},
	"Affinity":   {"LTarget": honoured, "RTarget": honoured, "Operand": honoured, "Weight": honoured},
	"Spread": {"Attribute": honoured, "Weight": honoured,
		"SpreadTarget": nested("SpreadTarget")},
	"SpreadTarget": {"Value": honoured, "Percent": honoured},
	"Resources": {
		"CPU": honoured, "MemoryMB": honoured, "MemoryMaxMB": honoured, "DiskMB": honoured,
		"Networks": nested("NetworkResource"), "Devices": nested("RequestedDevice"),
		"Cores": honoured, "NUMA": refused, "SecretsMB": refused, "IOPS": refused,
	},
	"NetworkResource": {
		"Mode": honoured, "IP": honoured, "MBits": honoured,
		"ReservedPorts": nested("Port"), "DynamicPorts": nested("Port"),
		"Device": refused, "CIDR": refused, "DNS": refused, "Hostname": refused, "CNI": refused,
	},
	"Port": {"Label": honoured, "Value": honoured, "To": honoured, "HostNetwork": honoured,
		"IgnoreCollision": refused},
	"RequestedDevice": {"Name": honoured, "Count": honoured,
		"Constraints": nested("Constraint"), "Affinities": nested("Affinity")},
	"RestartPolicy": {"Interval": honoured, "Attempts": honoured, "Delay": honoured,
		"Mode": honoured, "RenderTemplates": refused},
	"ReschedulePolicy": {"Attempts": honoured, "Interval": honoured, "Delay": honoured,
		"DelayFunction": honoured, "MaxDelay": honoured, "Unlimited": honoured},
	"MigrateStrategy": {"MaxParallel": honoured, "HealthCheck": honoured,
		"MinHealthyTime": honoured, "HealthyDeadline": honoured},
	"DisconnectStrategy": {"LostAfter": honoured, "StopOnClientAfter": honoured,
		"Replace": honoured, "Reconcile": honoured},
	"LogConfig": {"MaxFiles": honoured, "MaxFileSizeMB": honoured,
		"Enabled": refusedUnless(isTrue), "Disabled": refused},
	"VolumeRequest": {"Name": honoured, "Type": honoured, "Source": honoured,
		"ReadOnly": honoured, "AccessMode": honoured, "AttachmentMode": honoured,
		"PerAlloc": honoured, "Sticky": refused, "MountOptions": refused},
	"VolumeMount": {"Volume": honoured, "Destination": honoured, "ReadOnly": honoured,
		"PropagationMode": refusedUnless(equals("private")), "SELinuxLabel": refused},
	"TaskLifecycle": {"Hook": honoured, "Sidecar": honoured},
	"WorkloadIdentity": {"Name": honoured, "Audience": honoured, "Env": honoured, "File": honoured, "TTL": honoured,
		"ChangeMode": refused, "ChangeSignal": refused, "Filepath": refused, "ServiceName": refused, "ExtraClaims": refused},
	"TaskCSIPluginConfig": {"ID": honoured, "Type": honoured, "MountDir": honoured,
		"StagePublishBaseDir": honoured, "HealthTimeout": honoured},
	// Nomad's client fills in the default disk (300 MB, neither sticky nor
	// migrated); troupe does not size the allocation directory, so only
	// that default is accepted.
	"EphemeralDisk": {"Sticky": refused, "Migrate": refused,
		"SizeMB": refusedUnless(equals(float64(300)))},
}

// fieldKind is what troupe does with one Nomad job field.
type fieldKind uint8

const (
	kindHonoured fieldKind = iota // mapped onto troupe's job
	kindOutput                    // set by the server; a value sent is ignored, as Nomad ignores it
	kindRefused                   // a value other than zero (or what allow accepts) is refused
	kindPartly                    // a struct whose own fields say
)

var fieldKindNames = map[fieldKind]string{kindHonoured: "honoured", kindOutput: "output",
	kindRefused: "refused", kindPartly: "partly"}

func (k fieldKind) String() string { return fieldKindNames[k] }

// fieldRule is the rule for one field. of names the Nomad api struct of a
// nested object (of each element for lists, of each value when dict), whose
// fields nomadFields lists in turn; allow accepts some non-zero values of a
// refused field (Nomad's defaults, which its client sends); why replaces the
// default "<Field> is not supported yet".
type fieldRule struct {
	kind  fieldKind
	of    string
	dict  bool
	allow func(any) bool
	why   string
}

var (
	honoured = fieldRule{kind: kindHonoured}
	output   = fieldRule{kind: kindOutput}
	refused  = fieldRule{kind: kindRefused}
)

func nested(of string) fieldRule    { return fieldRule{kind: kindHonoured, of: of} }
func nestedMap(of string) fieldRule { return fieldRule{kind: kindHonoured, of: of, dict: true} }
func partly(of string) fieldRule    { return fieldRule{kind: kindPartly, of: of} }
func refusedAs(why string) fieldRule {
	return fieldRule{kind: kindRefused, why: why}
}
func refusedUnless(allow func(any) bool) fieldRule {
	return fieldRule{kind: kindRefused, allow: allow}
}

func isTrue(v any) bool { return v == true }

func equals(want any) func(any) bool { return func(v any) bool { return v == want } }

func equalFoldGet(m map[string]any, key string, v any) bool {
	want, ok := lookup(m, key)
	return ok && want == v
}
