package exec

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// lookupUser resolves a user name (or numeric uid) to its uid, primary gid
// and supplementary groups.
func lookupUser(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if u, err = user.LookupId(name); err != nil {
			return nil, fmt.Errorf("task user %q: %w", name, err)
		}
	}
	uid, err := parseID(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("task user %q: uid %q: %w", name, u.Uid, err)
	}
	gid, err := parseID(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("task user %q: gid %q: %w", name, u.Gid, err)
	}
	cred := &syscall.Credential{Uid: uid, Gid: gid}
	gids, _ := u.GroupIds() // without groups the task still runs
	for _, g := range gids {
		if n, err := parseID(g); err == nil {
			cred.Groups = append(cred.Groups, n)
		}
	}
	return cred, nil
}

// credential is the task user's ids when we are root; otherwise the task
// runs as the executor's user and nil is returned.
func credential(name string) (*syscall.Credential, error) {
	if name == "" || os.Geteuid() != 0 {
		if name != "" {
			fmt.Fprintf(os.Stderr, "executor: not root, running task as uid %d, not %q\n", os.Geteuid(), name)
		}
		return nil, nil
	}
	return lookupUser(name)
}

func parseID(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err
}
