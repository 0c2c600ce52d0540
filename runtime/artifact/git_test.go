package artifact

import (
	"context"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitServer serves a repository holding files over git's smart HTTP
// protocol (git http-backend), as a git host would.
func gitServer(t *testing.T, files map[string]string) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	out, err := exec.Command(git, "--exec-path").Output()
	require.NoError(t, err)
	backend := filepath.Join(string(out[:len(out)-1]), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("git-http-backend is not installed")
	}
	root := t.TempDir()
	work := filepath.Join(root, "work")
	run := func(dir string, args ...string) {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
	}
	require.NoError(t, os.MkdirAll(work, 0o755))
	run(work, "init", "-q", "-b", "main")
	for name, body := range files {
		p := filepath.Join(work, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	run(work, "add", ".")
	run(work, "commit", "-q", "-m", "init")
	run(root, "clone", "-q", "--bare", work, "repo.git")
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	return srv.URL + "/repo.git"
}

func TestFetchGitRepository(t *testing.T) {
	repo := gitServer(t, map[string]string{"README.md": "from git\n", "conf/app.hcl": "x = 1\n"})
	tg := target(t)
	var f Fetcher
	require.NoError(t, f.Fetch(context.Background(), tg, Artifact{Source: "git::" + repo, Destination: "local/repo"}))
	require.Equal(t, "from git\n", readFile(t, filepath.Join(tg.TaskDir, "local", "repo", "README.md")))
	require.Equal(t, "x = 1\n", readFile(t, filepath.Join(tg.TaskDir, "local", "repo", "conf", "app.hcl")))
}

func TestFetchGitRefusesLocalRepositories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tg := target(t)
	var f Fetcher
	err := f.Fetch(context.Background(), tg, Artifact{Source: "git::file:///etc", Destination: "local/repo"})
	require.ErrorIs(t, err, ErrUnsupportedSource)
}

func TestFetchGitWithoutGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var f Fetcher
	err := f.Fetch(context.Background(), target(t), Artifact{Source: "git::https://example.com/r.git"})
	require.ErrorIs(t, err, ErrUnsupportedSource)
	require.Contains(t, err.Error(), "git is not installed")
}
