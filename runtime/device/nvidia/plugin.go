package nvidia

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/troupe-dev/troupe/runtime/device"
)

// Names this plugin reports.
const (
	PluginName = "nvidia"
	Vendor     = "nvidia"
	TypeGPU    = "gpu"
)

// Group attribute keys; the unit is part of the name.
const (
	AttrMemoryMiB        = "memory_mib"         // framebuffer memory
	AttrCudaCompute      = "cuda_compute"       // compute capability, "9.0"
	AttrDriverVersion    = "driver_version"     // "550.54.15"
	AttrDisplayState     = "display_state"      // "enabled" or "disabled"
	AttrPersistenceMode  = "persistence_mode"   // "enabled" or "disabled"
	AttrPowerW           = "power_w"            // power management limit
	AttrBAR1MiB          = "bar1_mib"           // BAR1 memory
	AttrGraphicsClockMHz = "graphics_clock_mhz" // maximum graphics clock
	AttrMemoryClockMHz   = "memory_clock_mhz"   // maximum memory clock
)

// LocalityPCIBusID is the instance locality key of the GPU's PCI bus ID.
const LocalityPCIBusID = "pci_bus_id"

// DefaultEventTimeout is Config.EventTimeout's default.
const DefaultEventTimeout = time.Second

// DefaultIgnoredXids are XID codes that applications cause, not failing
// hardware (graphics engine exception, page fault, stopped processing,
// preemptive cleanup, video processor exception, context switch timeout):
// they do not mark a GPU unhealthy.
var DefaultIgnoredXids = []uint64{13, 31, 43, 45, 68, 109}

// Config configures a Plugin. The zero value uses the host's NVML.
type Config struct {
	// NVML is the library; nil means nvml.New() (libnvidia-ml.so.1).
	// Tests pass a mock such as go-nvml's mock/dgxh100.New().
	NVML nvml.Interface
	// Logger; nil discards logs.
	Logger *slog.Logger
	// EventTimeout bounds each wait for an NVML event, so Watch returns at
	// most this long after its context is done; 0 means DefaultEventTimeout.
	EventTimeout time.Duration
	// IgnoredXids do not mark a GPU unhealthy; nil means DefaultIgnoredXids.
	IgnoredXids []uint64
	// Root is where the host's /dev and driver files are, "" meaning "/":
	// Reserve's device nodes are Root/dev/nvidia<minor> (seen in a
	// container as /dev/nvidia<minor>) and its driver mounts come from
	// Root's library and binary directories (their symlinks resolved on
	// the host, so an absolute link leads out of Root). Tests point it at
	// a directory of their own.
	Root string
}

var (
	_ device.Plugin  = (*Plugin)(nil)
	_ device.Watcher = (*Plugin)(nil)
)

// Plugin is the NVIDIA device plugin. It is safe for concurrent use.
type Plugin struct {
	lib          nvml.Interface
	logger       *slog.Logger
	eventTimeout time.Duration
	ignoredXids  map[uint64]bool
	root         string

	initOnce  sync.Once
	mu        sync.Mutex
	available bool
	reason    string            // why not available
	known     map[int]knownGPU  // NVML index → identity from the last fingerprint
	xids      map[string]string // UUID → its critical XID error
	warned    map[string]bool   // log lines already written
}

// knownGPU is what a GPU was last seen as, to report it when it stops
// answering.
type knownGPU struct {
	uuid, name string
}

// New returns a plugin over cfg.NVML. It does not touch the library: the
// first Available, Fingerprint, Reserve, Stats or Watch loads it.
func New(cfg Config) *Plugin {
	p := &Plugin{
		lib:          cfg.NVML,
		logger:       cfg.Logger,
		eventTimeout: cfg.EventTimeout,
		ignoredXids:  map[uint64]bool{},
		root:         cfg.Root,
		known:        map[int]knownGPU{},
		xids:         map[string]string{},
		warned:       map[string]bool{},
	}
	if p.lib == nil {
		p.lib = nvml.New()
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	if p.root == "" {
		p.root = "/"
	}
	if p.eventTimeout <= 0 {
		p.eventTimeout = DefaultEventTimeout
	}
	ignored := cfg.IgnoredXids
	if ignored == nil {
		ignored = DefaultIgnoredXids
	}
	for _, x := range ignored {
		p.ignoredXids[x] = true
	}
	return p
}

// Name returns PluginName.
func (p *Plugin) Name() string { return PluginName }

// Available initialises NVML on the first call and reports whether it
// works; when it does not, reason says why ("libnvidia-ml.so.1 not found:
// no NVIDIA driver on this host").
func (p *Plugin) Available() (ok bool, reason string) {
	p.initOnce.Do(p.init)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.available, p.reason
}

// init loads and initialises NVML, logging the outcome once.
func (p *Plugin) init() {
	ret, panicked := initNVML(p.lib)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case panicked != nil:
		p.reason = fmt.Sprintf("NVML init panicked: %v", panicked)
	case ret == nvml.ERROR_LIBRARY_NOT_FOUND:
		p.reason = "libnvidia-ml.so.1 not found: no NVIDIA driver on this host"
	case ret == nvml.ERROR_DRIVER_NOT_LOADED:
		p.reason = "the NVIDIA kernel driver is not loaded"
	case ret != nvml.SUCCESS:
		p.reason = "NVML init failed: " + ret.Error()
	default:
		p.available = true
		p.logger.Info("nvidia: NVML initialised")
		return
	}
	p.logger.Info("nvidia: NVML unavailable, reporting no NVIDIA devices", "reason", p.reason)
}

// initNVML calls Init, turning a panic (a broken library binding) into a
// reason rather than a crashed agent.
func initNVML(lib nvml.Interface) (ret nvml.Return, panicked any) {
	defer func() { panicked = recover() }()
	return lib.Init(), nil
}

// Close shuts NVML down; the plugin then reports no devices. Stop Watch
// first.
func (p *Plugin) Close() error {
	p.initOnce.Do(func() {}) // never initialise after Close
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.available {
		if p.reason == "" {
			p.reason = "closed"
		}
		return nil
	}
	p.available, p.reason = false, "closed"
	if ret := p.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvidia: NVML shutdown: %w", ret)
	}
	return nil
}

// warnOnce logs msg at warning level the first time it is seen.
func (p *Plugin) warnOnce(msg string, args ...any) {
	key := fmt.Sprint(append([]any{msg}, args...)...)
	p.mu.Lock()
	seen := p.warned[key]
	p.warned[key] = true
	p.mu.Unlock()
	if !seen {
		p.logger.Warn(msg, args...)
	}
}
