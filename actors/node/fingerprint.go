package node

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/troupe-dev/troupe/messages"
	"github.com/troupe-dev/troupe/runtime/driver"
)

// Fingerprint fills a node's attributes, resources and drivers from the host.
func Fingerprint(ctx context.Context, n *messages.Node, drivers map[string]driver.Driver, now time.Time) {
	if n.Attributes == nil {
		n.Attributes = map[string]string{}
	}
	host, _ := os.Hostname()
	attrs := map[string]string{
		"kernel.name":           runtime.GOOS,
		"os.name":               osName(),
		"cpu.arch":              runtime.GOARCH,
		"cpu.numcores":          strconv.Itoa(runtime.NumCPU()),
		"unique.hostname":       host,
		"troupe.version":        Version,
		"nomad.version":         "1.9.0",
		"driver.count":          strconv.Itoa(len(drivers)),
		"unique.storage.volume": "/",
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		attrs["kernel.version"] = utsString(u.Release[:])
	}
	mhz := cpuMHz()
	attrs["cpu.frequency"] = strconv.Itoa(mhz)
	attrs["cpu.totalcompute"] = strconv.Itoa(mhz * runtime.NumCPU())
	memMB := memTotalMB()
	attrs["memory.totalbytes"] = strconv.FormatInt(memMB*1024*1024, 10)
	for k, v := range attrs {
		n.Attributes[k] = v
	}
	if n.NodeResources == nil {
		n.NodeResources = &messages.NodeResources{
			Cpu:    &messages.NodeCpuResources{CpuShares: int64(mhz * runtime.NumCPU()), TotalCpuCores: int32(runtime.NumCPU())},
			Memory: &messages.NodeMemoryResources{MemoryMB: memMB},
			Disk:   &messages.NodeDiskResources{DiskMB: diskMB("/")},
		}
	}
	if cpu := n.NodeResources.GetCpu(); cpu != nil && len(cpu.ReservableCpuCores) == 0 {
		cpu.ReservableCpuCores = reservableCores()
	}
	n.Drivers = map[string]*messages.DriverInfo{}
	for name, d := range drivers {
		fp := d.Fingerprint(ctx)
		n.Drivers[name] = &messages.DriverInfo{Attributes: fp.Attributes, Detected: fp.Detected,
			Healthy: fp.Healthy, HealthDescription: fp.HealthDescription, UpdateTime: now.UTC().Format(time.RFC3339)}
		if fp.Detected {
			for k, v := range fp.Attributes {
				n.Attributes[k] = v
			}
		}
	}
}

// Version is troupe's version, set by the agent.
var Version = "0.1.0"

func utsString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

func osName() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return runtime.GOOS
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "ID="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return runtime.GOOS
}

// cpuMHz reads the first core's clock from /proc/cpuinfo (2000 when unknown).
func cpuMHz() int {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 2000
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "cpu MHz" {
			if mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && mhz > 0 {
				return int(mhz)
			}
		}
	}
	return 2000
}

func memTotalMB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 1024
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb / 1024
		}
	}
	return 1024
}

func diskMB(path string) int64 {
	var st syscall.Statfs_t
	if syscall.Statfs(path, &st) != nil {
		return 0
	}
	return int64(st.Bavail) * st.Bsize / (1024 * 1024)
}
