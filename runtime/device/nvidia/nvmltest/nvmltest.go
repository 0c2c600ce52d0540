package nvmltest

import (
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// What every GPU of NewDGXH100 reports.
const (
	Model            = "NVIDIA H100 80GB HBM3"
	GPUs             = 8
	DriverVersion    = "550.54.15"
	MemoryMiB        = 81920
	CudaCompute      = "9.0"
	PowerLimitW      = 700
	BAR1MiB          = 131072
	GraphicsClockMHz = 1980
	MemoryClockMHz   = 2619
	PowerUsageW      = 70
)

// Server is the mock NVML; it satisfies nvml.Interface.
type Server struct {
	*server.Server
	events chan nvml.EventData

	mu         sync.Mutex
	registered map[int]bool // GPU indices registered for events
	open       int          // event sets created and not freed
}

var _ nvml.Interface = (*Server)(nil)

// NewDGXH100 returns a DGX H100 mock whose GPUs have PCI bus IDs
// 0000:0<i>:00.0, a power limit, BAR1 memory, clocks, display off,
// persistence on, utilisation, temperature and power usage, and whose
// event sets deliver what Send and SendXID queue.
func NewDGXH100() *Server {
	s := &Server{
		Server:     dgxh100.New(),
		events:     make(chan nvml.EventData, 64),
		registered: map[int]bool{},
	}
	for i := range s.Devices {
		s.fill(s.GPU(i))
	}
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return s.newEventSet(), nvml.SUCCESS }
	return s
}

// GPU returns GPU i, to change what it answers.
func (s *Server) GPU(i int) *server.Device { return s.Devices[i].(*server.Device) }

// UUIDs returns the GPUs' UUIDs in index order.
func (s *Server) UUIDs() []string {
	out := make([]string, len(s.Devices))
	for i := range s.Devices {
		out[i] = s.GPU(i).UUID
	}
	return out
}

// WithoutEvents removes the event API, as in go-nvml's plain mocks (whose
// calls panic), and returns s.
func (s *Server) WithoutEvents() *Server {
	s.EventSetCreateFunc = nil
	for i := range s.Devices {
		s.GPU(i).RegisterEventsFunc = nil
	}
	return s
}

// Send queues an event for the next wait of any event set.
func (s *Server) Send(e nvml.EventData) { s.events <- e }

// SendXID queues a critical XID error of GPU i.
func (s *Server) SendXID(i int, xid uint64) {
	s.Send(nvml.EventData{Device: s.Devices[i], EventType: nvml.EventTypeXidCriticalError, EventData: xid})
}

// Registered is how many GPUs were registered for events.
func (s *Server) Registered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.registered)
}

// OpenEventSets is how many event sets were created and not freed.
func (s *Server) OpenEventSets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

func (s *Server) newEventSet() nvml.EventSet {
	s.mu.Lock()
	s.open++
	s.mu.Unlock()
	return &mock.EventSet{
		WaitFunc: func(timeoutMs uint32) (nvml.EventData, nvml.Return) {
			t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
			defer t.Stop()
			select {
			case e := <-s.events:
				return e, nvml.SUCCESS
			case <-t.C:
				return nvml.EventData{}, nvml.ERROR_TIMEOUT
			}
		},
		FreeFunc: func() nvml.Return {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.open--
			return nvml.SUCCESS
		},
	}
}

// fill sets the answers that go-nvml's mock leaves out.
func (s *Server) fill(d *server.Device) {
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		p := nvml.PciInfo{PciDeviceId: d.Config.PciDeviceId}
		for i, c := range []byte(d.PciBusID) {
			p.BusId[i] = int8(c)
		}
		return p, nvml.SUCCESS
	}
	d.GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return PowerLimitW * 1000, nvml.SUCCESS }
	d.GetBAR1MemoryInfoFunc = func() (nvml.BAR1Memory, nvml.Return) {
		return nvml.BAR1Memory{Bar1Total: BAR1MiB << 20, Bar1Free: BAR1MiB << 20}, nvml.SUCCESS
	}
	d.GetMaxClockInfoFunc = func(t nvml.ClockType) (uint32, nvml.Return) {
		switch t {
		case nvml.CLOCK_GRAPHICS, nvml.CLOCK_SM:
			return GraphicsClockMHz, nvml.SUCCESS
		case nvml.CLOCK_MEM:
			return MemoryClockMHz, nvml.SUCCESS
		}
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	d.GetDisplayModeFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_DISABLED, nvml.SUCCESS }
	d.GetPersistenceModeFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_ENABLED, nvml.SUCCESS }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: uint32(10 * d.Index), Memory: 5}, nvml.SUCCESS
	}
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return uint32(30 + d.Index), nvml.SUCCESS }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return PowerUsageW * 1000, nvml.SUCCESS }
	d.RegisterEventsFunc = func(types uint64, _ nvml.EventSet) nvml.Return {
		if types&nvml.EventTypeXidCriticalError == 0 {
			return nvml.ERROR_NOT_SUPPORTED
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.registered[d.Index] = true
		return nvml.SUCCESS
	}
}
