//go:build !linux

package cgroups

// Manager is not available off Linux.
type Manager struct{}

// Detect is ModeNone off Linux.
func Detect() Mode { return ModeNone }

// New fails with ErrUnavailable off Linux.
func New(string) (*Manager, error) { return nil, ErrUnavailable }

// Mode is ModeNone.
func (m *Manager) Mode() Mode { return ModeNone }

// PathOf is "".
func (m *Manager) PathOf(string) string { return "" }

// Create fails.
func (m *Manager) Create(string, Resources) (Group, error) { return nil, ErrUnavailable }

// Load fails.
func (m *Manager) Load(string) (Group, error) { return nil, ErrUnavailable }

// Enter fails.
func Enter(Group) (func() error, error) { return nil, ErrUnavailable }

// Groups fails.
func (m *Manager) Groups() ([]string, error) { return nil, ErrUnavailable }

// RemoveParent fails.
func (m *Manager) RemoveParent() error { return ErrUnavailable }
