package containerd

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxIDLength is containerd's limit on identifiers.
const maxIDLength = 76

// ContainerID is the containerd container id (and snapshot key) of a task
// id "<allocID>/<task>": "/" and every character containerd refuses become
// "-", runs of separators collapse. An id that is still too long keeps its
// start and ends in a hash of the whole task id, so it stays unique.
func ContainerID(taskID string) string {
	var b strings.Builder
	sep := true // drop leading separators
	for _, r := range taskID {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
			sep = false
		case !sep:
			if r == '.' || r == '_' {
				b.WriteRune(r)
			} else {
				b.WriteByte('-')
			}
			sep = true
		}
	}
	id := strings.TrimRight(b.String(), "-._")
	if id != "" && len(id) <= maxIDLength && id == strings.ReplaceAll(taskID, "/", "-") {
		return id
	}
	sum := sha256.Sum256([]byte(taskID))
	hash := hex.EncodeToString(sum[:8])
	if len(id)+1+len(hash) > maxIDLength {
		id = strings.TrimRight(id[:maxIDLength-1-len(hash)], "-._")
	}
	if id == "" {
		return hash
	}
	return id + "-" + hash
}
