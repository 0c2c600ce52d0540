package mount

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// needRoot skips a test that mounts when not root, except on CI, where
// the mounts must be tested.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("this test needs root on CI (CI=true): run the tests as root")
	}
	t.Skip("skipped: bind mounts need root (run as root, or with CI=true to make this a failure)")
}

func TestUnescapeMountPath(t *testing.T) {
	cases := map[string]string{
		`/a\040b/c`: "/a b/c",
		"/plain":    "/plain",
		`/odd\04`:   `/odd\04`,
		`/tab\011x`: "/tab\tx",
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) { require.Equal(t, want, unescapeMountPath(in)) })
	}
}

func TestIsMountPointOfPlainPaths(t *testing.T) {
	ok, err := IsMountPoint("/")
	require.NoError(t, err)
	require.True(t, ok, "/ is always a mount point")
	dir := t.TempDir()
	ok, err = IsMountPoint(dir)
	require.NoError(t, err)
	require.False(t, ok)
}

func TestBindReadOnlyThenUnmount(t *testing.T) {
	needRoot(t)
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "hello"), []byte("hi"), 0o644))
	dst := filepath.Join(t.TempDir(), "with space", "mnt")
	require.NoError(t, os.MkdirAll(dst, 0o755))
	t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })

	require.NoError(t, Bind(src, dst, true))
	ok, err := IsMountPoint(dst + "/") // cleaned; the space is escaped in mountinfo
	require.NoError(t, err)
	require.True(t, ok)
	b, err := os.ReadFile(filepath.Join(dst, "hello"))
	require.NoError(t, err)
	require.Equal(t, "hi", string(b))
	err = os.WriteFile(filepath.Join(dst, "new"), []byte("x"), 0o644)
	require.ErrorIs(t, err, unix.EROFS)

	require.NoError(t, Unmount(dst))
	ok, err = IsMountPoint(dst)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, Unmount(dst), "a path that is no mount point is done")
	require.Error(t, Unmount(filepath.Join(dst, "missing")), "ENOENT is umount's error")
}

func TestBindReadWriteAndFailures(t *testing.T) {
	needRoot(t)
	src, dst := t.TempDir(), t.TempDir()
	t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })
	require.NoError(t, Bind(src, dst, false))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "f"), []byte("x"), 0o644))
	require.FileExists(t, filepath.Join(src, "f"), "writes go through to the source")
	require.NoError(t, Unmount(dst))

	err := Bind(filepath.Join(src, "missing"), dst, false)
	require.ErrorIs(t, err, unix.ENOENT)
	require.NotErrorIs(t, err, ErrBindRefused)
}

// refusedEnv makes the test binary a child that tries a bind in a user
// namespace of its own, where mount(2) answers EPERM.
const refusedEnv = "MOUNT_TEST_REFUSED_DIR"

func TestBindRefusedIsErrBindRefused(t *testing.T) {
	if dir := os.Getenv(refusedEnv); dir != "" {
		err := Bind(dir, dir, true)
		if !errors.Is(err, ErrBindRefused) || !errors.Is(err, unix.EPERM) {
			t.Fatalf("want ErrBindRefused wrapping EPERM, got %v", err)
		}
		return
	}
	dir := t.TempDir()
	cmd := osexec.Command(os.Args[0], "-test.run=^TestBindRefusedIsErrBindRefused$", "-test.count=1")
	cmd.Env = append(os.Environ(), refusedEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}}
	out, err := cmd.CombinedOutput()
	var exitErr *osexec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Skipf("skipped: cannot start a process in a user namespace here: %v", err)
	}
	require.NoError(t, err, "child: %s", out)
}
