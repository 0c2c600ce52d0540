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
// Paths are used as given; the task runs in its task dir, so a relative
// jar_path or class_path is relative to it. Handles carry the wrapped
// driver's state under the name "java". CheckConfig is the config check
// that jobspec runs at submission.
package java
