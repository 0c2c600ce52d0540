package clientsim

import (
	"fmt"
	"io"
	"time"
)

// Steady is the steady-state measurement.
type Steady struct {
	Wall, CPU   time.Duration // wall time, and the agent's CPU time in it
	Heartbeats  int64         // answered in it
	RaftEntries uint64        // raft log entries written in it
	RTT         Latencies
}

// Cores is the agent's CPU use in cores.
func (s Steady) Cores() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return s.CPU.Seconds() / s.Wall.Seconds()
}

// Rate is the heartbeats answered a second.
func (s Steady) Rate() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.Heartbeats) / s.Wall.Seconds()
}

// Result is what Run measured.
type Result struct {
	Scenario
	Grace           time.Duration // the agent's heartbeat grace
	Register, Place time.Duration // time to register every node; to run the job after
	TTLMin, TTLMax  time.Duration // TTLs the nodes held when the steady state began
	Steady          Steady
	Stopped         []string // IDs of the nodes stopped
	Detect          Detect
}

// Print writes the figures, one line each: "steady:" and "stop:" lines
// carry the headline numbers.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "clients: %d registered in %.1fs; %d allocations running %.1fs later; TTLs handed out %.1fs..%.1fs, grace %s; clients heartbeat at TTL/2\n",
		r.Nodes, r.Register.Seconds(), max(r.Allocs, 0), r.Place.Seconds(), r.TTLMin.Seconds(), r.TTLMax.Seconds(), r.Grace)
	s := r.Steady
	fmt.Fprintf(w, "steady: %.0fs, %d heartbeats (%.0f/s): leader CPU %.2f cores (%.1fs), heartbeat RTT p50 %s p99 %s max %s, raft entries %d\n",
		s.Wall.Seconds(), s.Heartbeats, s.Rate(), s.Cores(), s.CPU.Seconds(),
		ms(s.RTT.Quantile(0.5)), ms(s.RTT.Quantile(0.99)), ms(s.RTT.Max()), s.RaftEntries)
	if r.Stop > 0 {
		r.printStop(w)
	}
	fmt.Fprintln(w, r.Summary())
}

// Summary is the headline figures on one line ("summary: ...").
func (r *Result) Summary() string {
	s := r.Steady
	line := fmt.Sprintf("summary: %d clients, %.0f heartbeats/s: leader %.2f cores, heartbeat RTT p50 %s p99 %s, %d raft entries while steady",
		r.Nodes, s.Rate(), s.Cores(), ms(s.RTT.Quantile(0.5)), ms(s.RTT.Quantile(0.99)), s.RaftEntries)
	if r.Stop > 0 {
		d := r.Detect
		line += fmt.Sprintf("; %d stopped: all down with evaluations in %.1fs, %d/%d by last heartbeat + TTL + grace (bound %.1fs)",
			r.Stop, d.AllDown.Seconds(), d.InTime, r.Stop, d.Bound.Seconds())
	}
	return line
}

func (r *Result) printStop(w io.Writer) {
	d := r.Detect
	evaluated := "not seen done"
	if d.Evaluated > 0 {
		evaluated = fmt.Sprintf("done %.1fs", d.Evaluated.Seconds())
	}
	fmt.Fprintf(w, "stop: %d clients: all down with node-update evaluations in %.1fs (marked %.1fs..%.1fs; bound: last heartbeat + TTL + grace %.1fs); %d/%d by their deadline (+%s), latest %+.2fs; evaluations %s\n",
		r.Stop, d.AllDown.Seconds(), d.FirstEval.Seconds(), d.LastEval.Seconds(), d.Bound.Seconds(),
		d.InTime, r.Stop, DetectSlack, d.Late.Seconds(), evaluated)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
