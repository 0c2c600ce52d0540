package messages

// Name is the state as Nomad's keyring API spells it ("active",
// "inactive"; "" for unspecified).
func (s RootKeyState) Name() string {
	switch s {
	case RootKeyState_ROOT_KEY_STATE_ACTIVE:
		return "active"
	case RootKeyState_ROOT_KEY_STATE_INACTIVE:
		return "inactive"
	}
	return ""
}
