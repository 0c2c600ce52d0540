package java

import (
	"fmt"
	"slices"
	"strings"

	"github.com/troupe-dev/troupe/runtime/driver"
)

// taskSpec is a java task's driver config, checked.
type taskSpec struct {
	JarPath    string
	Class      string
	ClassPath  string
	JVMOptions []string
	Args       []string
}

// configKeys are the task config keys the driver reads.
var configKeys = []string{"jar_path", "class", "class_path", "jvm_options", "args"}

// nomadOnly are Nomad's java config keys this driver does not implement.
var nomadOnly = []string{"pid_mode", "ipc_mode", "cap_add", "cap_drop"}

// CheckConfig checks a java task's driver config (structpb AsMap) as the
// driver reads it; a problem is a wrapped driver.ErrInvalidConfig naming
// the key.
func CheckConfig(cfg map[string]any) error {
	_, err := parseSpec(cfg)
	return err
}

// parseSpec checks a task's driver config: exactly one of jar_path and
// class, class_path only with class, and lists of strings.
func parseSpec(cfg map[string]any) (*taskSpec, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: java: %s", driver.ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch {
		case slices.Contains(nomadOnly, k):
			return nil, bad("%s is not supported by this java driver", k)
		case !slices.Contains(configKeys, k):
			return nil, bad("unknown config key %q (known: %s)", k, strings.Join(configKeys, ", "))
		}
	}
	s := &taskSpec{}
	var err error
	for _, f := range []struct {
		key string
		to  *string
	}{{"jar_path", &s.JarPath}, {"class", &s.Class}, {"class_path", &s.ClassPath}} {
		v, set := cfg[f.key]
		if !set {
			continue
		}
		str, ok := v.(string)
		if !ok || str == "" {
			return nil, bad("%s must be a non-empty string", f.key)
		}
		*f.to = str
	}
	switch {
	case s.JarPath == "" && s.Class == "":
		return nil, bad("one of jar_path or class must be set")
	case s.JarPath != "" && s.Class != "":
		return nil, bad("jar_path and class are exclusive: set jar_path to run a jar, or class (with class_path) to run a class")
	case s.JarPath != "" && s.ClassPath != "":
		return nil, bad("class_path goes with class; java -jar ignores it (put the jar's class path in its manifest)")
	}
	if s.JVMOptions, err = stringList(cfg, "jvm_options"); err != nil {
		return nil, bad("%v", err)
	}
	if s.Args, err = stringList(cfg, "args"); err != nil {
		return nil, bad("%v", err)
	}
	return s, nil
}

// stringList reads cfg[key], a structpb list of strings ([]any) or a
// []string; absent is nil.
func stringList(cfg map[string]any, key string) ([]string, error) {
	switch l := cfg[key].(type) {
	case nil:
		if _, set := cfg[key]; set {
			return nil, fmt.Errorf("%s must be a list of strings", key)
		}
		return nil, nil
	case []string:
		return slices.Clone(l), nil
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			str, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d] must be a string", key, i)
			}
			out = append(out, str)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s must be a list of strings", key)
}

// arguments are the JVM's arguments for s (after the program itself):
// the jvm options, then -jar JAR or [-cp CLASS_PATH] CLASS, then the
// program's args.
func (s *taskSpec) arguments() []string {
	out := slices.Clone(s.JVMOptions)
	if s.JarPath != "" {
		out = append(out, "-jar", s.JarPath)
	} else {
		if s.ClassPath != "" {
			out = append(out, "-cp", s.ClassPath)
		}
		out = append(out, s.Class)
	}
	return append(out, s.Args...)
}
