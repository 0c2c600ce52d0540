package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/proto"

	"github.com/troupe-dev/troupe/messages"
)

// Peer is one server in the raft configuration.
type Peer struct {
	ID      string
	Address string
	Voter   bool
	Leader  bool
}

// Apply proposes cmd and waits until it is committed and applied. It
// answers the FSM's response and the log index. An error value returned by
// the FSM (e.g. state.ErrJobNotFound) comes back as err. A server that is
// not the leader answers ErrNotLeader (wrapping raft.ErrNotLeader). When
// ctx ends first, Apply returns ctx.Err() and the command may still commit.
// A zero cmd.Time is stamped with the current time (cmd is modified).
func (r *Raft) Apply(ctx context.Context, cmd *messages.Command) (any, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if cmd.Time == 0 {
		cmd.Time = time.Now().UnixNano()
	}
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, 0, fmt.Errorf("cluster: encode command: %w", err)
	}
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		if timeout = time.Until(dl); timeout <= 0 {
			return nil, 0, ctx.Err()
		}
	}
	f := r.raft.Apply(data, timeout)
	if err := waitFuture(ctx, f); err != nil {
		return nil, 0, mapRaftErr(err)
	}
	if err, ok := f.Response().(error); ok {
		return nil, f.Index(), err
	}
	return f.Response(), f.Index(), nil
}

// waitFuture waits for a raft future or for ctx to end.
func waitFuture(ctx context.Context, f raft.Future) error {
	if ctx.Done() == nil {
		return f.Error()
	}
	done := make(chan error, 1)
	go func() { done <- f.Error() }() // raft resolves every future, at the latest on shutdown
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func mapRaftErr(err error) error {
	if errors.Is(err, raft.ErrNotLeader) {
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	}
	return err
}

// IsLeader reports whether this server is the leader now.
func (r *Raft) IsLeader() bool { return r.raft.State() == raft.Leader }

// CurrentTerm is this server's raft term; a leader leads for one term.
func (r *Raft) CurrentTerm() uint64 { return r.raft.CurrentTerm() }

// LastContact is when this server last heard from the leader (the zero
// time when it never has). A leader's is meaningless: it is the leader.
// While no leader is known it is the last contact before raft forgot the
// leader: raft moves its own when this server grants a vote, which is no
// news from a leader.
func (r *Raft) LastContact() time.Time {
	if addr, _ := r.raft.LeaderWithID(); addr == "" {
		if ns := r.lostContact.Load(); ns != 0 {
			return time.Unix(0, ns)
		}
	}
	return r.raft.LastContact()
}

// noteLeader is a raft observer's filter, so it runs in raft's goroutine
// as the leader changes: when raft forgets the leader it keeps raft's last
// contact, before any vote moves it. It lets no observation through.
func (r *Raft) noteLeader(o *raft.Observation) bool {
	if l, ok := o.Data.(raft.LeaderObservation); ok && l.LeaderAddr == "" {
		var ns int64
		if last := o.Raft.LastContact(); !last.IsZero() {
			ns = last.UnixNano()
		}
		r.lostContact.Store(ns)
	}
	return false
}

// LeaderCh delivers true when this server becomes leader and false when it
// stops being leader. It has a single consumer; if that consumer lags,
// intermediate transitions are dropped and only the latest is kept.
func (r *Raft) LeaderCh() <-chan bool { return r.raft.LeaderCh() }

// Leader returns the current leader's address and ID ("" when unknown).
func (r *Raft) Leader() (addr, id string) {
	a, i := r.raft.LeaderWithID()
	return string(a), string(i)
}

// LocalAddr is the address this server's transport answers on.
func (r *Raft) LocalAddr() string { return string(r.trans.LocalAddr()) }

// Peers lists the servers of the current configuration.
func (r *Raft) Peers() ([]Peer, error) {
	servers, err := r.servers()
	if err != nil {
		return nil, err
	}
	_, leaderID := r.raft.LeaderWithID()
	peers := make([]Peer, 0, len(servers))
	for _, s := range servers {
		peers = append(peers, Peer{
			ID: string(s.ID), Address: string(s.Address),
			Voter: s.Suffrage == raft.Voter, Leader: s.ID == leaderID,
		})
	}
	return peers, nil
}

func (r *Raft) servers() ([]raft.Server, error) {
	f := r.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("cluster: raft configuration: %w", err)
	}
	return f.Configuration().Servers, nil
}

// AddVoter adds (or promotes) a voting server. Only the leader can.
func (r *Raft) AddVoter(id, addr string) error {
	return mapRaftErr(r.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 0).Error())
}

// RemoveServer removes a server from the cluster. Only the leader can, and
// it refuses to remove the last voter.
func (r *Raft) RemoveServer(id string) error {
	servers, err := r.servers()
	if err != nil {
		return err
	}
	idx := slices.IndexFunc(servers, func(s raft.Server) bool { return string(s.ID) == id })
	if idx < 0 {
		return fmt.Errorf("%w: %s", ErrUnknownServer, id)
	}
	voters := 0
	for _, s := range servers {
		if s.Suffrage == raft.Voter {
			voters++
		}
	}
	if servers[idx].Suffrage == raft.Voter && voters == 1 {
		return fmt.Errorf("%w: %s", ErrLastVoter, id)
	}
	return mapRaftErr(r.raft.RemoveServer(raft.ServerID(id), 0, 0).Error())
}

// Snapshot takes a snapshot now (raft also takes them on its own, by
// SnapshotThreshold and SnapshotInterval).
func (r *Raft) Snapshot() error { return r.raft.Snapshot().Error() }

// Stats returns raft's own statistics (state, term, last_log_index,
// applied_index, last_snapshot_index, ...).
func (r *Raft) Stats() map[string]string { return r.raft.Stats() }

// BootstrapServers forms a new cluster of peers, all voters. Every server
// of a -bootstrap-expect group calls it with the same set once it sees them
// all; on a server that already has raft state it does nothing.
func (r *Raft) BootstrapServers(peers []Peer) error {
	var conf raft.Configuration
	for _, p := range peers {
		conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Address), Suffrage: raft.Voter})
	}
	err := r.raft.BootstrapCluster(conf).Error()
	if errors.Is(err, raft.ErrCantBootstrap) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster: bootstrap %d servers: %w", len(peers), err)
	}
	return nil
}

// HasState reports whether this server belongs to a cluster yet (it was
// bootstrapped, joined, or restored from disk).
func (r *Raft) HasState() bool {
	f := r.raft.GetConfiguration()
	return f.Error() == nil && len(f.Configuration().Servers) > 0
}

// Barrier waits until every entry committed before it is applied to the
// FSM. A new leader calls it before acting on its state, which may lag the
// log until then.
func (r *Raft) Barrier(timeout time.Duration) error {
	return mapRaftErr(r.raft.Barrier(timeout).Error())
}
