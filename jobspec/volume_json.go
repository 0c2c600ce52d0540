package jobspec

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/troupe-dev/troupe/messages"
)

// ParseVolumesJSON decodes volumes in Nomad's JSON form: a register or
// create body {"Volumes": [...]} (api.CSIVolumeRegisterRequest,
// api.CSIVolumeCreateRequest) or one bare volume object (api.CSIVolume).
// Fields are PascalCase, capacities in bytes; unknown fields are ignored.
// Nomad's legacy top-level AccessMode and AttachmentMode become a
// capability when the volume has none, and are then cleared: in troupe
// they are the modes of the volume's current claims, which the server
// owns. Errors are *ParseError with the line and column of the offending
// byte. Call CanonicalizeVolume and ValidateVolume next.
func ParseVolumesJSON(src []byte) ([]*messages.CSIVolume, error) {
	if err := CheckJSON(src); err != nil {
		return nil, err
	}
	var top any
	if err := json.Unmarshal(src, &top); err != nil {
		return nil, jsonError(src, err)
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil, &ParseError{Line: 1, Column: 1, Detail: "a volume must be a JSON object"}
	}
	vols, err := decodeVolumes(src, obj)
	if err != nil {
		return nil, err
	}
	for i, v := range vols {
		if v == nil {
			return nil, &ParseError{Detail: fmt.Sprintf("Volumes[%d] must be a JSON object", i)}
		}
		adoptLegacyModes(v)
	}
	return vols, nil
}

// ParseVolumeJSON is ParseVolumesJSON for exactly one volume.
func ParseVolumeJSON(src []byte) (*messages.CSIVolume, error) {
	vols, err := ParseVolumesJSON(src)
	if err != nil {
		return nil, err
	}
	if len(vols) != 1 {
		return nil, &ParseError{Detail: fmt.Sprintf("Volumes holds %d volumes; expected exactly one", len(vols))}
	}
	return vols[0], nil
}

func decodeVolumes(src []byte, obj map[string]any) ([]*messages.CSIVolume, error) {
	if !hasKey(obj, "Volumes") {
		v := &messages.CSIVolume{}
		if err := json.Unmarshal(src, v); err != nil {
			return nil, jsonError(src, err)
		}
		return []*messages.CSIVolume{v}, nil
	}
	if list, ok := lookupValue(obj, "Volumes").([]any); !ok || len(list) == 0 {
		return nil, &ParseError{Detail: "Volumes must be a non-empty JSON array of volumes"}
	}
	var body struct{ Volumes []*messages.CSIVolume }
	if err := json.Unmarshal(src, &body); err != nil {
		return nil, jsonError(src, err)
	}
	return body.Volumes, nil
}

// hasKey reports whether obj has key (case-insensitively), even as null.
func hasKey(obj map[string]any, key string) bool {
	for k := range obj {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// adoptLegacyModes turns Nomad's pre-1.1 top-level modes into a capability
// when there is none, and clears them.
func adoptLegacyModes(v *messages.CSIVolume) {
	if len(v.RequestedCapabilities) == 0 && (v.AccessMode != "" || v.AttachmentMode != "") {
		v.RequestedCapabilities = []*messages.CSIVolumeCapability{
			{AccessMode: v.AccessMode, AttachmentMode: v.AttachmentMode}}
	}
	v.AccessMode, v.AttachmentMode = "", ""
}
