package java

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// TestDelegates: a java handle recovers through the wrapped driver under
// its name, and wait, signal, stop and destroy reach the wrapped task.
func TestDelegates(t *testing.T) {
	ctx := context.Background()
	fake := driver.NewFake()
	d := New(Config{JavaHome: fakeJava(t)}, fake)
	h, err := d.StartTask(ctx, &driver.TaskConfig{ID: "a/t", Config: map[string]any{"class": "Main"}, TaskDir: t.TempDir()})
	require.NoError(t, err)

	require.ErrorIs(t, d.RecoverTask(ctx, &driver.TaskHandle{Driver: "exec", TaskID: "a/t"}), driver.ErrInvalidHandle)
	require.ErrorIs(t, d.RecoverTask(ctx, nil), driver.ErrInvalidHandle)
	require.NoError(t, d.RecoverTask(ctx, h), "the fake recovers only handles named after it")
	require.Equal(t, 1, fake.Calls(driver.MethodRecoverTask))
	require.Equal(t, Name, h.Driver, "the caller's handle is left as it is")

	require.NoError(t, d.SignalTask(ctx, "a/t", "SIGHUP"))
	require.Len(t, fake.Signals("a/t"), 1)
	ch, err := d.WaitTask(ctx, "a/t")
	require.NoError(t, err)
	require.ErrorIs(t, d.DestroyTask(ctx, "a/t", false), driver.ErrTaskRunning)
	require.NoError(t, d.StopTask(ctx, "a/t", time.Second, ""))
	select {
	case r := <-ch:
		require.NotZero(t, r.Signal, "stopped by its signal")
	case <-time.After(10 * time.Second):
		t.Fatal("the wait never ended")
	}
	require.NoError(t, d.DestroyTask(ctx, "a/t", false))
	_, err = d.ExecTask(ctx, "a/t", &driver.ExecOptions{Command: []string{"true"}})
	require.ErrorIs(t, err, driver.ErrExecNotSupported, "the fake is no Execer")
	fake.Forget("a/t")
	require.ErrorIs(t, d.RecoverTask(ctx, h), driver.ErrTaskNotFound, "the wrapped driver's answer comes back")
}

// TestFingerprint: java is detected only when the wrapped driver is and a
// JVM answers; the attributes come from `java -version`.
func TestFingerprint(t *testing.T) {
	ctx := context.Background()
	fake := driver.NewFake()
	fake.FingerprintResult = &driver.Fingerprint{HealthDescription: "no executor"}
	fp := New(Config{}, fake).Fingerprint(ctx)
	require.False(t, fp.Detected)
	require.Contains(t, fp.HealthDescription, "no executor")

	fp = New(Config{JavaHome: t.TempDir()}, driver.NewFake()).Fingerprint(ctx)
	require.False(t, fp.Detected, "no JVM in an empty java home")
	require.Empty(t, fp.Attributes)
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      javaInfo
	}{
		{"openjdk 17", "openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)\nOpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)\n",
			javaInfo{"17.0.15", "OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)", "OpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)"}},
		{"java 8 with options", "Picked up _JAVA_OPTIONS: -Xmx1g\njava version \"1.8.0_402\"\nJava(TM) SE Runtime Environment (build 1.8.0_402-b06)\nJava HotSpot(TM) 64-Bit Server VM (build 25.402-b06, mixed mode)\n",
			javaInfo{"1.8.0_402", "Java(TM) SE Runtime Environment (build 1.8.0_402-b06)", "Java HotSpot(TM) 64-Bit Server VM (build 25.402-b06, mixed mode)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseVersion(tc.out)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := parseVersion("bash: java: command not found\n")
	require.Error(t, err)
}
