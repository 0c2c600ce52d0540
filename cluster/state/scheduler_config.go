package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// schedulerConfigKey is the one row's key in TableSchedulerConfig.
var schedulerConfigKey = key1("scheduler_config")

func schedulerConfigTable() *memdb.TableSchema {
	return table(TableSchedulerConfig, index(idxID, true, func(any) []byte { return schedulerConfigKey }))
}

// SchedulerConfig returns the stored scheduler configuration, or
// messages.DefaultSchedulerConfiguration (CreateIndex and ModifyIndex 0) when none is
// stored. The stored object is returned itself: do not mutate it.
func (s *Snap) SchedulerConfig() *messages.SchedulerConfiguration {
	if c := storedSchedulerConfig(s); c != nil {
		return c
	}
	return messages.DefaultSchedulerConfiguration()
}

func storedSchedulerConfig(s *Snap) *messages.SchedulerConfiguration {
	raw, err := s.txn.First(TableSchedulerConfig, idxID)
	if err != nil || raw == nil {
		return nil
	}
	return raw.(*messages.SchedulerConfiguration)
}

// ValidateSchedulerConfig checks a configuration an operator sets: the
// algorithm must be binpack, spread or empty (binpack). The error, which
// matches ErrInvalidSchedulerConfig, names the field.
func ValidateSchedulerConfig(c *messages.SchedulerConfiguration) error {
	if c == nil {
		return fmt.Errorf("%w: missing configuration", ErrInvalidSchedulerConfig)
	}
	switch c.GetSchedulerAlgorithm() {
	case "", messages.SchedulerAlgorithmBinPack, messages.SchedulerAlgorithmSpread:
		return nil
	}
	return fmt.Errorf("%w: SchedulerAlgorithm %q is not one of %q, %q", ErrInvalidSchedulerConfig,
		c.GetSchedulerAlgorithm(), messages.SchedulerAlgorithmBinPack, messages.SchedulerAlgorithmSpread)
}

// normalSchedulerConfig is c as it is stored: an empty algorithm is
// binpack and a missing PreemptionConfig turns every scheduler's
// preemption off (as Nomad reads a request without one).
func normalSchedulerConfig(c *messages.SchedulerConfiguration) *messages.SchedulerConfiguration {
	n := proto.Clone(c).(*messages.SchedulerConfiguration)
	if n.SchedulerAlgorithm == "" {
		n.SchedulerAlgorithm = messages.SchedulerAlgorithmBinPack
	}
	if n.PreemptionConfig == nil {
		n.PreemptionConfig = &messages.PreemptionConfig{}
	}
	return n
}

// SetSchedulerConfigResult is the FSM's answer to SetSchedulerConfig:
// Updated is false when a check-and-set found another ModifyIndex.
type SetSchedulerConfigResult struct {
	Updated bool
	Index   uint64
}

// applySetSchedulerConfig stores the configuration; with CAS only when
// the stored ModifyIndex (0 while none is stored) is c.Index.
func applySetSchedulerConfig(w *writeTxn, c *messages.SetSchedulerConfig) any {
	if err := ValidateSchedulerConfig(c.GetConfig()); err != nil {
		return err
	}
	old := storedSchedulerConfig(w.read())
	if c.GetCAS() && old.GetModifyIndex() != c.GetIndex() {
		return &SetSchedulerConfigResult{Updated: false, Index: w.index}
	}
	n := normalSchedulerConfig(c.GetConfig())
	n.CreateIndex, n.ModifyIndex = w.index, w.index
	if old != nil {
		n.CreateIndex = old.CreateIndex
	}
	w.insert(TableSchedulerConfig, n)
	w.changed[TableSchedulerConfig] = true
	w.ev.schedulerConfig()
	return &SetSchedulerConfigResult{Updated: true, Index: w.index}
}

// writeSchedulerConfig adds the stored configuration, if any, to the
// snapshot's current record.
func (s *fsmSnapshot) writeSchedulerConfig(cw *chunkWriter) error {
	c := storedSchedulerConfig(s.snap)
	if c == nil {
		return nil
	}
	cw.rec.SchedulerConfig = c
	return cw.added()
}
