package agent

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/troupe-dev/troupe/api"
)

// mountEntry is one line of a mounts file.
type mountEntry struct{ device, point string }

// readMounts reads a /proc/self/mounts file.
func readMounts(path string) ([]mountEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		out = append(out, mountEntry{device: fields[0], point: unescapeMount(fields[1])})
	}
	return out, sc.Err()
}

// unescapeMount undoes the kernel's octal escapes of a mount point
// ("\040" is a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, ok := octal(s[i+1 : i+4]); ok {
				b.WriteByte(n)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octal(s string) (byte, bool) {
	if len(s) != 3 {
		return 0, false
	}
	var n int
	for _, c := range s {
		if c < '0' || c > '7' {
			return 0, false
		}
		n = n*8 + int(c-'0')
	}
	return byte(n), n < 256
}

// diskStats is the file system at point's size and use (df's figures).
func diskStats(device, point string) (*api.HostDiskStats, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(point, &st); err != nil {
		return nil, err
	}
	bs := uint64(st.Bsize)
	d := &api.HostDiskStats{Device: device, Mountpoint: point, Size: st.Blocks * bs,
		Available: st.Bavail * bs, Used: (st.Blocks - st.Bfree) * bs}
	if d.Used+d.Available > 0 {
		d.UsedPercent = float64(d.Used) / float64(d.Used+d.Available) * 100
	}
	if st.Files > 0 {
		d.InodesUsedPercent = float64(st.Files-st.Ffree) / float64(st.Files) * 100
	}
	return d, nil
}

// hostDisks is every block-device file system mounted on the host, once
// per device, and the one that holds dir.
func hostDisks(mountsFile, dir string) (disks []*api.HostDiskStats, dirDisk *api.HostDiskStats) {
	mounts, err := readMounts(mountsFile)
	if err != nil {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, m := range mounts {
		if !strings.HasPrefix(m.device, "/dev/") || seen[m.device] {
			continue
		}
		if d, err := diskStats(m.device, m.point); err == nil {
			seen[m.device] = true
			disks = append(disks, d)
		}
	}
	// The directory's file system is the mount with the longest point
	// that contains it.
	dir = filepath.Clean(dir)
	var best *mountEntry
	for i, m := range mounts {
		if under(dir, m.point) && (best == nil || len(m.point) >= len(best.point)) {
			best = &mounts[i]
		}
	}
	if best != nil {
		dirDisk, _ = diskStats(best.device, dir)
		if dirDisk != nil {
			dirDisk.Mountpoint = best.point
		}
	}
	return disks, dirDisk
}

// under reports whether p is point or below it.
func under(p, point string) bool {
	return point == "/" || p == point || strings.HasPrefix(p, point+"/")
}
