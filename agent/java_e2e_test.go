//go:build linux

package agent

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/stretchr/testify/require"

	texec "github.com/troupe-dev/troupe/runtime/driver/exec"
)

// javaMarker starts the line the test program prints.
const javaMarker = "troupe-java-hello"

// javaSource prints the marker, its args and the system property x, then
// sleeps until it is stopped.
const javaSource = `public class Hello {
    public static void main(String[] args) throws Exception {
        System.out.println("` + javaMarker + ` args=" + String.join(",", args) + " x=" + System.getProperty("x"));
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
`

// buildJava compiles javaSource into dir/classes and packages it as
// dir/hello.jar (Main-Class Hello), dir a temp dir readable by nobody
// (isolated java tasks see it through the agent's chroot_env).
func buildJava(t *testing.T) (dir string) {
	t.Helper()
	for _, tool := range []string{"javac", "jar"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s missing: run scripts/setup.sh (default-jdk-headless)", tool)
			}
			t.Skipf("skipping: %s missing (scripts/setup.sh installs default-jdk-headless)", tool)
		}
	}
	dir = t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	src := filepath.Join(dir, "Hello.java")
	require.NoError(t, os.WriteFile(src, []byte(javaSource), 0o644))
	for _, argv := range [][]string{
		{"javac", "-d", filepath.Join(dir, "classes"), src},
		{"jar", "cfe", filepath.Join(dir, "hello.jar"), "Hello", "-C", filepath.Join(dir, "classes"), "."},
	} {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		require.NoError(t, err, "%v: %s", argv, out)
	}
	return dir
}

func javaJob(id string, config map[string]any) *nomad.Job {
	job := nomad.NewServiceJob(id, id, "global", 50)
	tg := nomad.NewTaskGroup("g", 1)
	task := nomad.NewTask("t", "java").Require(&nomad.Resources{CPU: ptr(200), MemoryMB: ptr(256)})
	for k, v := range config {
		task.SetConfig(k, v)
	}
	task.KillTimeout = ptr(5 * time.Second)
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// TestJavaJobEndToEnd runs java jobs through a real agent and a real JVM:
// the node advertises driver.java with the JVM's version; a jar_path job
// prints its marker, args and -D system property to its log (read with
// Nomad's client through /v1/client/fs/logs), its JVM outlives an agent
// restart and is re-attached, and stopping the job ends the JVM; a class
// job with class_path runs too, and alloc exec runs a command in it; bad
// configs are 400s.
func TestJavaJobEndToEnd(t *testing.T) {
	dir := buildJava(t)
	// the tasks see the test's dir at /opt/troupe-java-test (chroot_env)
	inTask := "/opt/troupe-java-test"
	jar := filepath.Join(inTask, "hello.jar")
	data := t.TempDir()
	config := func() *Config {
		cfg := testConfig(t, data)
		cfg.ChrootEnv = maps.Clone(texec.DefaultChrootEnv)
		cfg.ChrootEnv[dir] = inTask
		return cfg
	}
	a := startAgent(t, config())
	defer func() { _ = a.Shutdown() }()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	require.NoError(t, err)
	node, _, err := c.Nodes().Info(a.Node().GetID(), nil)
	require.NoError(t, err)
	require.Equal(t, "1", node.Attributes["driver.java"])
	require.Regexp(t, `^\d+(\.\d+)*([._]\d+)?$`, node.Attributes["driver.java.version"])
	require.NotEmpty(t, node.Attributes["driver.java.runtime"])
	require.NotEmpty(t, node.Attributes["driver.java.vm"])
	require.True(t, node.Drivers["java"].Detected && node.Drivers["java"].Healthy, "%+v", node.Drivers["java"])

	for _, bad := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"args": []string{"x"}}, "one of jar_path or class must be set"},
		{map[string]any{"jar_path": jar, "class": "Hello"}, "jar_path and class are exclusive"},
	} {
		_, _, err := c.Jobs().Register(javaJob("bad", bad.cfg), nil)
		require.ErrorContains(t, err, "400")
		require.ErrorContains(t, err, bad.want)
	}
	_, _, err = c.Jobs().Info("bad", nil)
	require.ErrorContains(t, err, "404", "a refused job changes nothing")

	_, _, err = c.Jobs().Register(javaJob("jar", map[string]any{"jar_path": jar,
		"jvm_options": []string{"-Dx=from-jvm-options", "-Xmx64m"}, "args": []string{"one", "two"}}), nil)
	require.NoError(t, err)
	stub := waitAllocStatus(t, c, "jar", "running")
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	waitJavaLog(t, c, alloc, javaMarker+" args=one,two x=from-jvm-options")
	pid := javaPid(t, jar)
	require.NotZero(t, pid, "a JVM runs the jar")
	require.Equal(t, "65534\njava\n", javaExec(t, c, alloc, "id -u; cat /proc/1/comm"),
		"the JVM runs as nobody, pid 1 of its own pid namespace")
	require.Equal(t, pid, taskPid(t, a, alloc.ID, "t"))

	crash(t, a)
	require.True(t, alive(pid), "the JVM outlives the agent")
	b := startAgent(t, config())
	defer func() { _ = b.Shutdown() }()
	c, err = nomad.NewClient(&nomad.Config{Address: "http://" + b.HTTPAddr()})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		full, _, err := c.Allocations().Info(alloc.ID, nil)
		require.NoError(t, err)
		evs := full.TaskStates["t"].Events
		return full.ClientStatus == "running" && len(evs) > 0 && evs[len(evs)-1].Type == "Reattached"
	}, 20*time.Second, 20*time.Millisecond, "the java task was never re-attached")
	require.Equal(t, pid, javaPid(t, jar), "re-attached, not started again")

	_, _, err = c.Jobs().Deregister("jar", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "jar", "complete")
	require.Eventually(t, func() bool { return !alive(pid) && javaPid(t, jar) == 0 }, 10*time.Second, 10*time.Millisecond,
		"the JVM still runs after the job stopped")

	classes := filepath.Join(inTask, "classes")
	_, _, err = c.Jobs().Register(javaJob("class", map[string]any{"class": "Hello", "class_path": classes,
		"jvm_options": []string{"-Dx=y"}, "args": []string{"c"}}), nil)
	require.NoError(t, err)
	stub = waitAllocStatus(t, c, "class", "running")
	alloc, _, err = c.Allocations().Info(stub.ID, nil)
	require.NoError(t, err)
	waitJavaLog(t, c, alloc, javaMarker+" args=c x=y")
	pid = javaPid(t, classes)
	require.NotZero(t, pid, "a JVM runs the class")
	require.Equal(t, "exec-in-java\n/local\n", javaExec(t, c, alloc, "echo exec-in-java; pwd"),
		"alloc exec runs in a java task's root through the exec driver")
	_, _, err = c.Jobs().Deregister("class", false, nil)
	require.NoError(t, err)
	waitAllocStatus(t, c, "class", "complete")
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond)
}

// javaExec runs script with sh in the java task of alloc (alloc exec)
// and returns its stdout.
func javaExec(t *testing.T, c *nomad.Client, alloc *nomad.Allocation, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code, err := c.Allocations().Exec(ctx, alloc, "t", false, []string{"sh", "-c", script},
		strings.NewReader(""), &stdout, &stderr, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 0, code, "stderr: %s", stderr.String())
	return stdout.String()
}

// waitJavaLog reads task t's stdout with Nomad's client (AllocFS.Logs,
// /v1/client/fs/logs) until it holds want.
func waitJavaLog(t *testing.T, c *nomad.Client, alloc *nomad.Allocation, want string) {
	t.Helper()
	var last string
	require.Eventually(t, func() bool {
		cancel := make(chan struct{})
		defer close(cancel)
		frames, errs := c.AllocFS().Logs(alloc, false, "t", "stdout", nomad.OriginStart, 0, cancel, nil)
		var buf bytes.Buffer
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					last = buf.String()
					return strings.Contains(last, want)
				}
				buf.Write(f.Data)
			case err := <-errs:
				last = err.Error()
				return false
			}
		}
	}, 60*time.Second, 100*time.Millisecond, "no %q in the task's log (last: %q)", want, &last)
}

// javaPid finds the live java process whose command line names path, 0
// when there is none.
func javaPid(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmd), "\x00")
		if filepath.Base(args[0]) != "java" || !strings.Contains(string(cmd), path) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // a zombie is gone
		}
		return pid
	}
	return 0
}
