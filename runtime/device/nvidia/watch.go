package nvidia

import (
	"context"
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/troupe-dev/troupe/runtime/device"
)

// Watch waits for XID critical errors until ctx is done, marking the GPU
// that reported one unhealthy (for the rest of the plugin's life) and
// calling onChange. Each wait lasts at most Config.EventTimeout, so Watch
// returns that long after ctx is done at most. It returns an error
// wrapping device.ErrWatchUnsupported at once when NVML is unavailable or
// has no events (logged once), and an error when waiting fails.
func (p *Plugin) Watch(ctx context.Context, onChange func()) error {
	if ok, reason := p.Available(); !ok {
		return fmt.Errorf("%w: nvidia: %s", device.ErrWatchUnsupported, reason)
	}
	set, err := p.openEvents()
	if err != nil {
		p.warnOnce("nvidia: no XID events, GPU health comes from fingerprints only", "reason", err.Error())
		return fmt.Errorf("%w: nvidia: %w", device.ErrWatchUnsupported, err)
	}
	defer set.Free()
	timeoutMs := uint32(max(1, p.eventTimeout.Milliseconds()))
	for ctx.Err() == nil {
		data, ret := set.Wait(timeoutMs)
		switch ret {
		case nvml.SUCCESS:
			if p.HandleEvent(data) {
				onChange()
			}
		case nvml.ERROR_TIMEOUT:
		default:
			return fmt.Errorf("nvidia: waiting for events: %w", ret)
		}
	}
	return nil
}

// openEvents creates an event set with every GPU that reports XID
// critical errors. NVML bindings without events (go-nvml's mocks panic)
// count as no events.
func (p *Plugin) openEvents() (set nvml.EventSet, err error) {
	defer func() {
		if r := recover(); r != nil {
			freeQuietly(set)
			set, err = nil, fmt.Errorf("NVML event API unusable: %v", r)
		}
	}()
	set, ret := p.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("EventSetCreate: %w", ret)
	}
	count, ret := p.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		set.Free()
		return nil, fmt.Errorf("DeviceGetCount: %w", ret)
	}
	registered := 0
	var errs []error
	for i := range count {
		dev, ret := p.lib.DeviceGetHandleByIndex(i)
		if ret == nvml.SUCCESS {
			ret = dev.RegisterEvents(nvml.EventTypeXidCriticalError, set)
		}
		if ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("GPU %d: %w", i, ret))
			continue
		}
		registered++
	}
	if registered == 0 {
		set.Free()
		return nil, fmt.Errorf("no GPU reports XID events: %w", errors.Join(errs...))
	}
	if len(errs) > 0 {
		p.warnOnce("nvidia: some GPUs report no XID events", "err", errors.Join(errs...).Error())
	}
	return set, nil
}

// HandleEvent applies one NVML event and reports whether it changed a
// GPU's health: a critical XID that is not ignored marks the event's GPU
// unhealthy, or every known GPU when the event names none (or one that
// cannot be identified). Watch calls it; it is exported so that a caller
// with its own event loop, and tests, can feed events.
func (p *Plugin) HandleEvent(e nvml.EventData) bool {
	if e.EventType != nvml.EventTypeXidCriticalError {
		return false
	}
	xid := e.EventData
	if p.ignoredXids[xid] {
		p.logger.Debug("nvidia: ignoring application XID", "xid", xid)
		return false
	}
	desc := fmt.Sprintf("XID critical error %d", xid)
	var uuids []string
	if e.Device != nil {
		if uuid, ret := e.Device.GetUUID(); ret == nvml.SUCCESS {
			uuids = []string{uuid}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if uuids == nil {
		for _, k := range p.known {
			uuids = append(uuids, k.uuid)
		}
	}
	changed := false
	for _, uuid := range uuids {
		if _, marked := p.xids[uuid]; marked {
			continue
		}
		p.xids[uuid] = desc
		changed = true
		p.logger.Warn("nvidia: GPU unhealthy after a critical XID error", "uuid", uuid, "xid", xid)
	}
	return changed
}

// freeQuietly frees a half-built event set from a binding that panics.
func freeQuietly(set nvml.EventSet) {
	defer func() { _ = recover() }()
	if set != nil {
		set.Free()
	}
}
