package clustertest

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNamePatterns(t *testing.T) {
	tests := []struct {
		name  string
		netns string // expected run id for runOfNetns, "" for no match
		link  string // expected run id for runOfLink
	}{
		{name: "tt3fa2h0", netns: "tt3fa2"},
		{name: "tt3fa2h199", netns: "tt3fa2"},
		{name: "tt3fa2v7", link: "tt3fa2"},
		{name: "tt3fa2br", link: "tt3fa2"},
		{name: "tt3fa2h1234"},
		{name: "tt3FA2h0"},
		{name: "tt3fa2zz"},
		{name: "tt3fa2brx"},
		{name: "xtt3fa2br"},
		{name: "tt3fa2"},
		{name: "eth0"},
		{name: "tt3fa2h"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, ok := runOfNetns(tc.name)
			require.Equal(t, tc.netns != "", ok)
			require.Equal(t, tc.netns, id)
			id, ok = runOfLink(tc.name)
			require.Equal(t, tc.link != "", ok)
			require.Equal(t, tc.link, id)
		})
	}
}

func TestGeneratedNamesFitAndMatch(t *testing.T) {
	id, err := newRunID()
	require.NoError(t, err)
	require.Regexp(t, `^tt[0-9a-f]{4}$`, id)
	for _, i := range []int{0, 9, MaxHosts - 1} {
		for _, n := range []string{nsName(id, i), vethName(id, i), bridgeName(id)} {
			require.LessOrEqual(t, len(n), 15, n)
		}
		got, ok := runOfNetns(nsName(id, i))
		require.True(t, ok)
		require.Equal(t, id, got)
		got, ok = runOfLink(vethName(id, i))
		require.True(t, ok)
		require.Equal(t, id, got)
	}
	got, ok := runOfComment(fenceComment(id))
	require.True(t, ok)
	require.Equal(t, id, got)
}

func TestParseLinkNames(t *testing.T) {
	out := "1: lo: <LOOPBACK,UP> mtu 65536 qdisc noqueue\n" +
		"5: ttab12v0@if2: <BROADCAST,MULTICAST,UP> mtu 1500 master ttab12br\n" +
		"6: ttab12br: <BROADCAST,MULTICAST,UP> mtu 1500\n"
	require.Equal(t, []string{"lo", "ttab12v0", "ttab12br"}, parseLinkNames(out))
}

func TestParsePrefixes(t *testing.T) {
	addrs := "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n" +
		"4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\\\n"
	require.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("192.0.2.0/24"),
	}, parseAddrPrefixes(addrs))

	routes := "default via 192.0.2.1 dev eth0\n" +
		"10.0.0.0/8 via 192.0.2.9 dev eth0\n" +
		"local 192.0.2.2 dev eth0 table local proto kernel scope host src 192.0.2.2\n" +
		"broadcast 192.0.2.255 dev eth0 table local\n" +
		"unreachable 0.0.0.0/0 table 7\n"
	require.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("192.0.2.2/32"),
		netip.MustParsePrefix("192.0.2.255/32"),
	}, parseRoutePrefixes(routes))
}

func TestPickSubnet(t *testing.T) {
	p := netip.MustParsePrefix
	tests := []struct {
		name  string
		used  []netip.Prefix
		start int
		want  string
		err   error
	}{
		{name: "free", used: []netip.Prefix{p("192.0.2.0/24")}, start: 7, want: "10.213.7.0/24"},
		{name: "skips used", used: []netip.Prefix{p("10.213.7.0/24"), p("10.213.8.5/32")}, start: 7, want: "10.213.9.0/24"},
		{name: "wraps", used: []netip.Prefix{p("10.213.255.0/24")}, start: 255, want: "10.213.0.0/24"},
		{name: "falls back", used: []netip.Prefix{p("10.0.0.0/8")}, start: 3, want: "172.29.3.0/24"},
		{name: "none", used: []netip.Prefix{p("10.0.0.0/8"), p("172.16.0.0/12")}, err: ErrNoSubnet},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pickSubnet(tc.used, tc.start)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got.String())
		})
	}
}

func TestFenceRulesRoundTrip(t *testing.T) {
	rules := fenceRules("ttab12br", "clustertest-ttab12")
	require.Len(t, rules, 3)
	require.Equal(t, []string{"-i", "ttab12br", "-o", "ttab12br", "-m", "comment",
		"--comment", "clustertest-ttab12", "-j", "ACCEPT"}, rules[0])
	var listing strings.Builder
	listing.WriteString("-P FORWARD DROP\n-A FORWARD -j DOCKER-USER\n")
	for _, r := range rules {
		listing.WriteString("-A FORWARD " + strings.Join(r, " ") + "\n")
	}
	listing.WriteString("-A FORWARD -i x -m comment --comment \"clustertest-zzzz\" -j DROP\n")
	got := parseFenceRules(listing.String())
	require.Len(t, got, 1)
	require.Len(t, got["ttab12"], 3)
	require.Equal(t, append([]string{"-w", "5", "-D", "FORWARD"}, rules[1]...), got["ttab12"][1])
}

// recTB records Skipf and Fatalf instead of stopping the test.
type recTB struct {
	testing.TB
	skipped, failed string
}

func (r *recTB) Helper()                          {}
func (r *recTB) Skipf(format string, args ...any) { r.skipped = format }
func (r *recTB) Fatalf(format string, args ...any) {
	r.failed = format
}

func TestRequireRootDecision(t *testing.T) {
	found := func(string) (string, error) { return "/bin/x", nil }
	noNsenter := func(name string) (string, error) {
		if name == "nsenter" {
			return "", errors.New("not found")
		}
		return "/bin/" + name, nil
	}
	env := func(ci string) func(string) string {
		return func(string) string { return ci }
	}
	tests := []struct {
		name          string
		p             probe
		skip, fail    bool
		reasonContain string
	}{
		{name: "root ok", p: probe{goos: "linux", euid: 0, getenv: env(""), lookPath: found}},
		{name: "non-root skips", p: probe{goos: "linux", euid: 1000, getenv: env(""), lookPath: found},
			skip: true, reasonContain: "root"},
		{name: "non-root fails in CI", p: probe{goos: "linux", euid: 1000, getenv: env("true"), lookPath: found},
			fail: true, reasonContain: "root"},
		{name: "CI=false skips", p: probe{goos: "linux", euid: 1000, getenv: env("false"), lookPath: found},
			skip: true},
		{name: "missing tool", p: probe{goos: "linux", euid: 0, getenv: env(""), lookPath: noNsenter},
			skip: true, reasonContain: "util-linux"},
		{name: "not linux", p: probe{goos: "darwin", euid: 0, getenv: env(""), lookPath: found},
			skip: true, reasonContain: "Linux"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recTB{TB: t}
			requireRoot(r, tc.p)
			require.Equal(t, tc.skip, r.skipped != "", "skipped")
			require.Equal(t, tc.fail, r.failed != "", "failed")
			require.Contains(t, tc.p.unmet(), tc.reasonContain)
		})
	}
}

func TestLogPathsAreUnique(t *testing.T) {
	c := &Cluster{logDir: t.TempDir(), logs: map[string]bool{}}
	a := c.logPathLocked("host0", "agent")
	b := c.logPathLocked("host0", "agent")
	d := c.logPathLocked("host1", "a/b c")
	require.NotEqual(t, a, b)
	require.Equal(t, "host0-agent.log", filepath.Base(a))
	require.Equal(t, "host0-agent-2.log", filepath.Base(b))
	require.Equal(t, "host1-a_b_c.log", filepath.Base(d))
}

func TestRunLock(t *testing.T) {
	old := stateDir
	stateDir = t.TempDir()
	t.Cleanup(func() { stateDir = old })

	dead, _, err := probeRun("tt0000")
	require.NoError(t, err)
	require.True(t, dead, "no lock file means a dead run")

	l, err := acquireRun("tt0001")
	require.NoError(t, err)
	_, err = acquireRun("tt0001")
	require.ErrorIs(t, err, os.ErrExist)
	dead, _, err = probeRun("tt0001")
	require.NoError(t, err)
	require.False(t, dead, "a held lock means a live run")

	// A crashed run: the file remains but nobody holds the lock.
	require.NoError(t, l.f.Close())
	dead, l2, err := probeRun("tt0001")
	require.NoError(t, err)
	require.True(t, dead)
	l2.release()
	require.NoFileExists(t, filepath.Join(stateDir, "tt0001.lock"))
}

func TestNewClusterRejectsBadSize(t *testing.T) {
	for _, n := range []int{0, -1, MaxHosts + 1} {
		c, err := newCluster(t, n, t.TempDir())
		require.ErrorIs(t, err, ErrBadSize)
		require.Nil(t, c)
	}
}
