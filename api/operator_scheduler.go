package api

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/troupe-dev/troupe/messages"
)

// SchedulerConfigurationResponse answers GET
// /v1/operator/scheduler/configuration, in Nomad's shape: the
// configuration in force (the defaults, with ModifyIndex 0, while none
// was set) and the raft index it was read at.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *messages.SchedulerConfiguration
	Index           uint64
	KnownLeader     bool
	LastContact     int64
}

// SchedulerSetConfigurationResponse answers PUT
// /v1/operator/scheduler/configuration: Updated is false when a
// check-and-set found another ModifyIndex.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	Index   uint64
}

const schedulerConfigPath = "/v1/operator/scheduler/configuration"

// SchedulerGetConfiguration reads the scheduler configuration.
func (o *Operator) SchedulerGetConfiguration(q *QueryOptions) (*SchedulerConfigurationResponse, *QueryMeta, error) {
	var out SchedulerConfigurationResponse
	qm, err := o.c.query(schedulerConfigPath, &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// SchedulerSetConfiguration replaces the scheduler configuration.
func (o *Operator) SchedulerSetConfiguration(c *messages.SchedulerConfiguration, w *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	return o.setSchedulerConfig(c, nil, w)
}

// SchedulerCASConfiguration replaces the scheduler configuration only if
// its ModifyIndex is still c.ModifyIndex (Updated says whether it did).
func (o *Operator) SchedulerCASConfiguration(c *messages.SchedulerConfiguration, w *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	return o.setSchedulerConfig(c, url.Values{"cas": {strconv.FormatUint(c.GetModifyIndex(), 10)}}, w)
}

func (o *Operator) setSchedulerConfig(c *messages.SchedulerConfiguration, params url.Values, w *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	var out SchedulerSetConfigurationResponse
	wm, err := o.c.writeParams(http.MethodPut, schedulerConfigPath, params, c, &out, w)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
