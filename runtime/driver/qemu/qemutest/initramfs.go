package qemutest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Marker is what the guest's /init prints on the serial console once its
// HTTP server listens; PowerdownMarker when the power button was pressed.
const (
	Marker          = "TROUPE-QEMU-GUEST-READY"
	PowerdownMarker = "TROUPE-QEMU-GUEST-POWERDOWN"
)

// modules are the kernel modules the guest loads (with their
// dependencies): the virtio NIC and what turns the ACPI power button
// into an input event for acpid.
var modules = []string{"virtio_pci", "virtio_net", "button", "evdev"}

// Kernel is the newest /boot/vmlinuz-* with its modules directory.
type Kernel struct {
	Path       string
	ModulesDir string
}

// FindKernel finds a kernel installed with its modules.
func FindKernel() (*Kernel, error) {
	paths, _ := filepath.Glob("/boot/vmlinuz-*")
	sort.Strings(paths)
	for i := len(paths) - 1; i >= 0; i-- {
		release := strings.TrimPrefix(filepath.Base(paths[i]), "vmlinuz-")
		dir := filepath.Join("/lib/modules", release)
		if _, err := os.Stat(filepath.Join(dir, "modules.dep")); err == nil {
			return &Kernel{Path: paths[i], ModulesDir: dir}, nil
		}
	}
	return nil, errors.New("qemutest: no /boot/vmlinuz-* with /lib/modules/<release>/modules.dep (scripts/setup.sh installs linux-image-cloud-amd64)")
}

// BuildInitramfs writes the guest's initramfs to path: busybox at
// /bin/busybox, the modules, /www/index.html holding index, and an /init
// that serves /www on guestPort.
func BuildInitramfs(path string, k *Kernel, guestPort int, index string) error {
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return fmt.Errorf("qemutest: busybox-static: %w", err)
	}
	order, err := loadOrder(k.ModulesDir, modules)
	if err != nil {
		return err
	}
	dir := func(n string) entry { return entry{Name: n, Mode: os.ModeDir | 0o755} }
	es := []entry{dir("bin"), dir("proc"), dir("sys"), dir("dev"), dir("www"), dir("mod"), dir("etc"),
		dir("etc/acpi"),
		{Name: "bin/busybox", Mode: 0o755, Data: bb},
		{Name: "bin/sh", Mode: os.ModeSymlink | 0o777, Data: []byte("busybox")},
		{Name: "www/index.html", Mode: 0o644, Data: []byte(index)},
		{Name: "etc/acpid.conf", Mode: 0o644, Data: []byte("PWRF pwr\n")},
		{Name: "etc/acpi/pwr", Mode: 0o755, Data: []byte("#!/bin/sh\necho " + PowerdownMarker + "\npoweroff -f\n")},
	}
	var insmods strings.Builder
	for _, rel := range order {
		data, err := os.ReadFile(filepath.Join(k.ModulesDir, rel))
		if err != nil {
			return fmt.Errorf("qemutest: module: %w", err)
		}
		name := "mod/" + filepath.Base(rel)
		es = append(es, entry{Name: name, Mode: 0o644, Data: data})
		fmt.Fprintf(&insmods, "insmod /%s\n", name)
	}
	init := "#!/bin/sh\n/bin/busybox --install -s /bin\nexport PATH=/bin\n" +
		"mount -t proc proc /proc\nmount -t sysfs sys /sys\nmount -t devtmpfs dev /dev\n" +
		insmods.String() +
		"ip link set lo up\nip link set eth0 up\nip addr add 10.0.2.15/24 dev eth0\nip route add default via 10.0.2.2\n" +
		"acpid -c /etc/acpi -a /etc/acpid.conf -l /dev/console\n" +
		fmt.Sprintf("httpd -p %d -h /www\n", guestPort) +
		"echo " + Marker + "\nexec sleep 2147483647\n"
	es = append(es, entry{Name: "init", Mode: 0o755, Data: []byte(init)})
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeNewc(f, es); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// loadOrder lists the module files (relative to dir) to insmod for want,
// every dependency before its users, from modules.dep.
func loadOrder(dir string, want []string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	deps, byName := map[string][]string{}, map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		mod, rest, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		deps[mod] = strings.Fields(rest)
		byName[strings.TrimSuffix(filepath.Base(mod), ".ko")] = mod
	}
	var order []string
	seen := map[string]bool{}
	var visit func(m string)
	visit = func(m string) {
		if seen[m] {
			return
		}
		seen[m] = true
		for _, d := range deps[m] {
			visit(d)
		}
		order = append(order, m)
	}
	for _, w := range want {
		m, ok := byName[w]
		if !ok {
			return nil, fmt.Errorf("qemutest: module %s not in %s/modules.dep (built in? then drop it)", w, dir)
		}
		visit(m)
	}
	return order, nil
}
