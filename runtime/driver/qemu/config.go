package qemu

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// taskSpec is a task's driver config, checked.
type taskSpec struct {
	ImagePath      string
	DriveInterface string
	Accelerator    string
	Args           []string
	PortMap        map[string]int
	Graceful       bool
}

// configKeys are the task config keys the driver reads.
var configKeys = []string{"image_path", "drive_interface", "accelerator", "args", "port_map", "graceful_shutdown"}

// parseSpec checks a task's driver config; a problem is a wrapped
// driver.ErrInvalidConfig naming the key.
func parseSpec(cfg map[string]any) (*taskSpec, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: qemu: %s", driver.ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	for k := range cfg {
		if !slices.Contains(configKeys, k) {
			return nil, bad("unknown config key %q (known: %s)", k, strings.Join(configKeys, ", "))
		}
	}
	s := &taskSpec{DriveInterface: "ide", Accelerator: "tcg", PortMap: map[string]int{}}
	var ok bool
	if s.ImagePath, ok = cfg["image_path"].(string); !ok || s.ImagePath == "" {
		return nil, bad("image_path must be a non-empty string")
	}
	if v, set := cfg["drive_interface"]; set {
		if s.DriveInterface, ok = v.(string); !ok || !slices.Contains([]string{"ide", "scsi", "sd", "mtd", "floppy", "pflash", "virtio", "none"}, s.DriveInterface) {
			return nil, bad("drive_interface must be one of ide, scsi, sd, mtd, floppy, pflash, virtio, none")
		}
	}
	if v, set := cfg["accelerator"]; set {
		if s.Accelerator, ok = v.(string); !ok || (s.Accelerator != "tcg" && s.Accelerator != "kvm") {
			return nil, bad(`accelerator must be "tcg" or "kvm"`)
		}
	}
	if v, set := cfg["args"]; set {
		list, ok := v.([]any)
		if !ok {
			return nil, bad("args must be a list of strings")
		}
		for i, a := range list {
			str, ok := a.(string)
			if !ok {
				return nil, bad("args[%d] must be a string", i)
			}
			s.Args = append(s.Args, str)
		}
	}
	if v, set := cfg["graceful_shutdown"]; set {
		if s.Graceful, ok = v.(bool); !ok {
			return nil, bad("graceful_shutdown must be a bool")
		}
	}
	if v, set := cfg["port_map"]; set {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad("port_map must map port labels to guest ports")
		}
		for label, p := range m {
			n, ok := p.(float64)
			if !ok || n != math.Trunc(n) || n < 1 || n > 65535 {
				return nil, bad("port_map.%s must be a port number 1-65535", label)
			}
			s.PortMap[label] = int(n)
		}
	}
	return s, nil
}

// resolveImage finds the image: a relative path is in the task dir, an
// absolute one must be in the allocation dir (the task dir's parent) or
// under one of allowed; neither may leave it through "..".
func resolveImage(p, taskDir string, allowed []string) (string, error) {
	if !filepath.IsAbs(p) {
		abs := filepath.Join(taskDir, p)
		if !within(abs, taskDir) {
			return "", fmt.Errorf("%w: qemu: image_path %q leaves the task dir", driver.ErrInvalidConfig, p)
		}
		return abs, nil
	}
	p = filepath.Clean(p)
	for _, dir := range append([]string{filepath.Dir(taskDir)}, allowed...) {
		if within(p, dir) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: qemu: image_path %q is not in the allocation dir nor in the client's image paths",
		driver.ErrInvalidConfig, p)
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// hostForwards are the user-net hostfwd rules of spec's port_map, from the
// task's port variables, sorted by label; a label without a host port is
// an error.
func hostForwards(s *taskSpec, env map[string]string) ([]string, error) {
	labels := make([]string, 0, len(s.PortMap))
	for l := range s.PortMap {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	var out []string
	for _, l := range labels {
		host := env["NOMAD_HOST_PORT_"+envLabel(l)]
		if _, err := strconv.Atoi(host); err != nil {
			return nil, fmt.Errorf("%w: qemu: port_map.%s: the task's network has no port labelled %q",
				driver.ErrInvalidConfig, l, l)
		}
		ip := env["NOMAD_HOST_IP_"+envLabel(l)]
		for _, proto := range []string{"tcp", "udp"} {
			out = append(out, fmt.Sprintf("hostfwd=%s:%s:%s-:%d", proto, ip, host, s.PortMap[l]))
		}
	}
	return out, nil
}

// envLabel is a port label as it appears in a variable name.
func envLabel(label string) string {
	b := []byte(label)
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			b[i] = '_'
		}
	}
	return string(b)
}

// vmLayout is where a VM's files are.
type vmLayout struct {
	Image, Monitor, PidFile string
}

// guestMemoryMB is the VM's memory: resources.memory, 300 MB (Nomad's
// default task memory) when unset.
func guestMemoryMB(cfg *driver.TaskConfig) int64 {
	if cfg.MemoryMB <= 0 {
		return 300
	}
	return cfg.MemoryMB
}

// qemuArgs builds qemu's arguments (after the program name) for a task.
func qemuArgs(cfg *driver.TaskConfig, s *taskSpec, l vmLayout, hostMHz int, maxCPUs int) ([]string, error) {
	mem := guestMemoryMB(cfg)
	args := []string{
		"-machine", "type=pc,accel=" + s.Accelerator,
		"-name", cfg.TaskName,
		"-m", strconv.FormatInt(mem, 10) + "M",
		"-smp", strconv.Itoa(vcpus(cfg.CPU, hostMHz, maxCPUs)),
		"-drive", "file=" + l.Image + ",if=" + s.DriveInterface,
		"-display", "none",
		// the serial console is qemu's stdout: the task's stdout log, or
		// the pipe of its log forwarder
		"-chardev", "stdio,id=troupe-serial,signal=off",
		"-serial", "chardev:troupe-serial",
		"-monitor", "unix:" + l.Monitor + ",server,nowait",
		"-pidfile", l.PidFile,
	}
	fwd, err := hostForwards(s, cfg.Env)
	if err != nil {
		return nil, err
	}
	if len(fwd) > 0 {
		args = append(args, "-netdev", strings.Join(append([]string{"user", "id=user.0"}, fwd...), ","),
			"-device", "virtio-net-pci,netdev=user.0")
	}
	return append(args, s.Args...), nil
}

// vcpus is one vCPU per hostMHz of the task's cpu, rounded up, from 1 to
// maxCPUs.
func vcpus(cpuMHz int64, hostMHz, maxCPUs int) int {
	if hostMHz <= 0 {
		hostMHz = 2000
	}
	n := int((cpuMHz + int64(hostMHz) - 1) / int64(hostMHz))
	return max(1, min(n, max(maxCPUs, 1)))
}

// CheckConfig checks a qemu task's driver config as StartTask will (keys,
// types, values), so that a job is refused at submission; the image's
// existence is only known on the client.
func CheckConfig(cfg map[string]any) error {
	_, err := parseSpec(cfg)
	return err
}
