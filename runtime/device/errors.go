package device

import "errors"

// Sentinel errors shared by every plugin. Plugins wrap them with %w.
var (
	// ErrNoInstances: Reserve was called without instance IDs.
	ErrNoInstances = errors.New("device: no instance IDs to reserve")
	// ErrUnknownInstance: an instance ID that no plugin reports.
	ErrUnknownInstance = errors.New("device: unknown device instance")
	// ErrUnavailable: the plugin's library or hardware is missing, so it
	// cannot reserve anything.
	ErrUnavailable = errors.New("device: plugin unavailable")
	// ErrWatchUnsupported: the plugin cannot watch device health; its
	// fingerprints still report health.
	ErrWatchUnsupported = errors.New("device: health watch not supported")
	// ErrDuplicatePlugin: two plugins with the same name in one Manager.
	ErrDuplicatePlugin = errors.New("device: duplicate plugin name")
	// ErrInvalidPlugin: a nil plugin, or one without a name.
	ErrInvalidPlugin = errors.New("device: invalid plugin")
	// ErrReservationConflict: two plugins set one environment variable to
	// different values, or one container path to different host paths.
	ErrReservationConflict = errors.New("device: conflicting reservations")
)
