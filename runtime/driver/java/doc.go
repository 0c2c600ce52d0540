// Package java is the java task driver: it runs a Java program (a jar with
// jar_path, or a main class with class and class_path) in a JVM found on
// the client (Config.JavaHome, or "java" on PATH).
//
// It is built on another driver by composition, as Nomad's java driver
// runs inside the exec driver's isolation: the java driver turns its task
// config into a command line, "java [jvm_options] -jar JAR [args]" or
// "java [jvm_options] -cp CLASS_PATH CLASS [args]", and hands the task,
// with its environment, user, resources and network namespace unchanged,
// to the wrapped driver (the agent wraps an exec driver), which starts,
// watches, stops, signals and recovers it, and runs commands in it when
// it is a driver.Execer. Whatever isolation that driver gives its tasks,
// java tasks get too. Like Nomad, the driver adds no -Xmx: the task's
// memory is the limit the wrapped driver enforces, and jvm_options set the
// heap when a job wants one.
//
// Paths. The client isolates java tasks as it does exec ones (but a CSI
// plugin's): the task runs in its own root, in /local. There a relative
// jar_path or class_path entry is, as in Nomad, relative to the task dir
// (local/app.jar), and it is rewritten to the path the task sees
// (/local/app.jar; alloc/, secrets/ and tmp/ likewise); any other
// relative path, and an absolute one outside /local, /alloc, /secrets,
// /tmp, the client's chroot_env (Config.ChrootEnv) and the task's
// volumes, is refused with ErrInvalidConfig naming it. The JVM runs at
// its path in the root when a chroot_env path holds it (/usr/lib/jvm);
// otherwise its home is bound in read-only at its host path, and a home
// that cannot be (/, or beneath the task's own dirs) fails the start
// with ErrNoJava. An unisolated task runs in its task dir with its paths
// as given. Handles carry the wrapped driver's state under the name
// "java". CheckConfig is the config check that jobspec runs at
// submission.
package java
