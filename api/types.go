package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/troupe-dev/troupe/jobspec"

	"github.com/troupe-dev/troupe/messages"
)

// This file holds the wire types of the /v1 HTTP API that are not domain
// objects. Domain objects (jobs, allocations, evaluations, nodes) travel as
// the generated structs in package messages. Field names and shapes follow
// Nomad's /v1 JSON so that github.com/hashicorp/nomad/api can decode them.

// JobRegisterRequest is the body of PUT /v1/jobs.
type JobRegisterRequest struct {
	Job *messages.Job
	// EnforceIndex registers only when the stored job's JobModifyIndex is
	// JobModifyIndex (0: the job must not exist).
	EnforceIndex   bool   `json:",omitempty"`
	JobModifyIndex uint64 `json:",omitempty"`
	// Submission is the source the job was registered from, which
	// GET /v1/job/:id/submission answers.
	Submission *messages.JobSubmission `json:",omitempty"`
}

// JobRegisterResponse answers PUT /v1/jobs.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	Index           uint64
}

// PeriodicForceResponse answers POST /v1/job/:id/periodic/force.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	Index           uint64
}

// JobDeregisterResponse answers DELETE /v1/job/:id.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Index           uint64
}

// JobsParseRequest is the body of POST /v1/jobs/parse; the answer is a
// *messages.Job.
type JobsParseRequest struct {
	JobHCL string
	// Variables is a var-file's content for the file's variable blocks.
	Variables string `json:",omitempty"`
	// VariableFlags are -var NAME=VALUE flags (troupe's; Nomad's CLI
	// parses job files itself).
	VariableFlags map[string]string `json:",omitempty"`
	Canonicalize  bool
}

// JobListStub is one row of GET /v1/jobs.
type JobListStub struct {
	ID                string
	ParentID          string
	Periodic          bool
	ParameterizedJob  bool
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64 // unix nanos
	Version           uint64
	Meta              map[string]string `json:",omitempty"`
}

// JobSummary answers GET /v1/job/:id/summary: alloc counts per task group.
type JobSummary struct {
	JobID     string
	Namespace string
	Summary   map[string]TaskGroupSummary
	// Children counts a periodic job's children by status (nil for
	// other jobs).
	Children    *JobChildrenSummary `json:",omitempty"`
	CreateIndex uint64
	ModifyIndex uint64
}

// JobChildrenSummary counts a parent job's children by status.
type JobChildrenSummary struct {
	Pending int64
	Running int64
	Dead    int64
}

// TaskGroupSummary counts a task group's allocations by client status.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}

// AllocListStub is one row of GET /v1/allocations and
// GET /v1/job/:id/allocations.
type AllocListStub struct {
	ID                 string
	EvalID             string
	Name               string
	Namespace          string
	NodeID             string
	NodeName           string
	JobID              string
	JobVersion         uint64
	JobType            string
	TaskGroup          string
	DesiredStatus      string
	DesiredDescription string
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*messages.TaskState
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64 // unix nanos
	ModifyTime         int64 // unix nanos
	DeploymentStatus   *messages.AllocDeploymentStatus
}

// NewAllocListStub is the list row of a whole allocation.
func NewAllocListStub(a *messages.Allocation) *AllocListStub {
	return &AllocListStub{ID: a.ID, EvalID: a.EvalID, Name: a.Name, Namespace: a.Namespace, NodeID: a.NodeID,
		NodeName: a.NodeName, JobID: a.JobID, JobVersion: a.JobVersion, TaskGroup: a.TaskGroup,
		DesiredStatus: a.DesiredStatus, DesiredDescription: a.DesiredDescription, ClientStatus: a.ClientStatus,
		ClientDescription: a.ClientDescription, TaskStates: a.TaskStates, CreateIndex: a.CreateIndex,
		ModifyIndex: a.ModifyIndex, CreateTime: a.CreateTime, ModifyTime: a.ModifyTime,
		DeploymentStatus: a.DeploymentStatus}
}

// AllocStopResponse answers POST /v1/allocation/:id/stop.
type AllocStopResponse struct {
	EvalID string
	Index  uint64
}

// NodeListStub is one row of GET /v1/nodes.
type NodeListStub struct {
	Address               string
	ID                    string
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Drivers               map[string]*messages.DriverInfo
	NodeResources         *messages.NodeResources
	ReservedResources     *messages.NodeReservedResources
	CreateIndex           uint64
	ModifyIndex           uint64
}

// NodeEligibilityUpdateRequest is the body of POST /v1/node/:id/eligibility.
// Eligibility is "eligible" or "ineligible".
type NodeEligibilityUpdateRequest struct {
	NodeID      string
	Eligibility string
}

// NodeEligibilityUpdateResponse answers POST /v1/node/:id/eligibility.
type NodeEligibilityUpdateResponse struct {
	EvalIDs         []string
	EvalCreateIndex uint64
	NodeModifyIndex uint64
	Index           uint64
}

// AgentSelf answers GET /v1/agent/self (lower-case keys, as Nomad).
type AgentSelf struct {
	Config map[string]any               `json:"config"`
	Member AgentMember                  `json:"member"`
	Stats  map[string]map[string]string `json:"stats"`
}

// AgentMember is one gossip member. The CLI relies on these Tags:
// "region", "dc", "build", "rpc_addr" (host:port of the raft/RPC address,
// compared with /v1/status/leader) and "raft_vsn".
type AgentMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// ServerMembers answers GET /v1/agent/members.
type ServerMembers struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*AgentMember
}

// RaftConfiguration answers GET /v1/operator/raft/configuration.
type RaftConfiguration struct {
	Servers []*RaftServer
	Index   uint64
}

// RaftServer is one raft peer.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// StreamFrame is one frame of GET /v1/client/fs/logs without plain=true:
// the body is a sequence of JSON frames; Data is base64 (encoding/json of
// []byte). An empty frame {} is a heartbeat.
type StreamFrame struct {
	Offset    int64  `json:",omitempty"`
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// IsHeartbeat reports whether the frame carries nothing.
func (f *StreamFrame) IsHeartbeat() bool {
	return f.Offset == 0 && len(f.Data) == 0 && f.File == "" && f.FileEvent == ""
}

// ActorInfo describes one live actor.
type ActorInfo struct {
	Path          string
	Kind          string
	Parent        string
	Children      []string
	Phase         string
	MailboxLen    int
	Restarts      int
	LastMessage   string
	LastMessageAt int64 // unix nanos; 0 when none yet
	Messages      uint64
}

// ActorTree answers GET /v1/actors: a flat list of the actors of one node;
// clients build the tree from Parent and Children.
type ActorTree struct {
	Node   string
	Actors []*ActorInfo
}

// QueryOptions are the query parameters of a read. WaitIndex and WaitTime
// make it a blocking query (index, wait).
// Prefix filters list endpoints by ID prefix. WithContext attaches a
// context that cancels the request.
type QueryOptions struct {
	Region     string
	Namespace  string
	AllowStale bool
	WaitIndex  uint64
	WaitTime   time.Duration
	Prefix     string
	Filter     string // a go-bexpr expression, on the lists that filter
	Params     map[string]string

	ctx context.Context
}

// QueryMeta is what a read's response headers say.
type QueryMeta struct {
	LastIndex   uint64
	LastContact time.Duration
	KnownLeader bool
}

// WriteMeta is what a write's response headers say.
type WriteMeta struct {
	LastIndex uint64
}

// WriteOptions are the query parameters of a write.
type WriteOptions struct {
	Region    string
	Namespace string

	ctx context.Context
}

// WithContext returns a copy of q whose requests are bound to ctx.
func (q *QueryOptions) WithContext(ctx context.Context) *QueryOptions {
	c := QueryOptions{}
	if q != nil {
		c = *q
	}
	c.ctx = ctx
	return &c
}

// Context is the context set by WithContext, or context.Background.
func (q *QueryOptions) Context() context.Context {
	if q == nil || q.ctx == nil {
		return context.Background()
	}
	return q.ctx
}

// WithContext returns a copy of w whose requests are bound to ctx.
func (w *WriteOptions) WithContext(ctx context.Context) *WriteOptions {
	c := WriteOptions{}
	if w != nil {
		c = *w
	}
	c.ctx = ctx
	return &c
}

// Context is the context set by WithContext, or context.Background.
func (w *WriteOptions) Context() context.Context {
	if w == nil || w.ctx == nil {
		return context.Background()
	}
	return w.ctx
}

// MarshalJSON writes the request with jobspec.EncodeJSON, which keeps the
// zero values (count = 0, restart attempts = 0) that the generated struct
// tags would drop and the server would then fill with defaults.
// With EnforceIndex the job goes in Nomad's wrapper, {"Job": ...,
// "EnforceIndex": true, "JobModifyIndex": N}.
// A Submission goes next to "Job" as well.
func (r *JobRegisterRequest) MarshalJSON() ([]byte, error) {
	fields := map[string]any{}
	if r.EnforceIndex {
		fields["EnforceIndex"], fields["JobModifyIndex"] = true, r.JobModifyIndex
	}
	if r.Submission != nil {
		fields["Submission"] = r.Submission
	}
	if len(fields) == 0 {
		return jobspec.EncodeJSON(r.Job)
	}
	return wrapJob(r.Job, fields)
}

// wrapJob is {"Job": ...} as jobspec.EncodeJSON writes it, with fields
// added next to "Job".
func wrapJob(job *messages.Job, fields map[string]any) ([]byte, error) {
	raw, err := jobspec.EncodeJSON(job)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage // the job stays as written
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	for k, v := range fields {
		if out[k], err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

// DrainSpec says how to drain a node: Deadline (nanoseconds; 0 = no
// deadline, -1 = force now) and whether system jobs stay.
type DrainSpec struct {
	Deadline         int64
	IgnoreSystemJobs bool
}

// NodeUpdateDrainRequest is the body of POST /v1/node/:id/drain; a nil
// DrainSpec ends the drain.
type NodeUpdateDrainRequest struct {
	NodeID       string
	DrainSpec    *DrainSpec
	MarkEligible bool
}

// NodeDrainUpdateResponse answers POST /v1/node/:id/drain.
type NodeDrainUpdateResponse struct {
	EvalIDs         []string
	EvalCreateIndex uint64
	NodeModifyIndex uint64
	Index           uint64
}
