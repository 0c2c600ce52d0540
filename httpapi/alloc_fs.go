package httpapi

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/troupe-dev/troupe/runtime/safepath"
)

// AllocDirBackend is what the alloc fs routes need beyond Backend. A
// Backend without it answers those routes 501.
type AllocDirBackend interface {
	// AllocDirFor is the directory of an allocation this client runs, or
	// the HTTP address of the agent that runs it (elsewhere).
	AllocDirFor(allocID string) (dir, elsewhere string, err error)
}

// AllocFileInfo is Nomad's api.AllocFileInfo: one entry of the allocation
// dir, as fs/ls and fs/stat answer.
type AllocFileInfo struct {
	Name        string
	IsDir       bool
	Size        int64
	FileMode    string
	ModTime     time.Time
	ContentType string `json:",omitempty"`
}

func (s *Server) allocFSRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /v1/client/fs/ls/{alloc}", s.fsRoute(s.fsList))
	m.HandleFunc("GET /v1/client/fs/stat/{alloc}", s.fsRoute(s.fsStat))
	m.HandleFunc("GET /v1/client/fs/cat/{alloc}", s.fsRoute(s.fsCat))
	m.HandleFunc("GET /v1/client/fs/readat/{alloc}", s.fsRoute(s.fsReadAt))
	m.HandleFunc("GET /v1/client/fs/stream/{alloc}", s.fsRoute(s.fsStream))
}

// fsHandler serves one fs request on the allocation dir dir, path being
// the request's path (already checked to stay beneath dir).
type fsHandler func(w http.ResponseWriter, r *http.Request, dir, path string)

// fsRoute finds the allocation's dir, passes the request on to the agent
// that has it, and refuses a path that leaves the dir before anything is
// read.
func (s *Server) fsRoute(h fsHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, ok := s.b.(AllocDirBackend)
		if !ok {
			s.writeError(w, r, codeErr(http.StatusNotImplemented, "this agent serves no allocation files"))
			return
		}
		dir, elsewhere, err := b.AllocDirFor(r.PathValue("alloc"))
		if err != nil {
			s.writeError(w, r, codeErr(http.StatusNotFound, "%v", err))
			return
		}
		if elsewhere != "" {
			ProxyTo(elsewhere).ServeHTTP(w, r)
			return
		}
		path := r.URL.Query().Get("path")
		if path == "" {
			path = "/"
		}
		if _, err := safepath.CleanRel(path); err != nil {
			s.writeError(w, r, fsErr(err, path))
			return
		}
		h(w, r, dir, path)
	}
}

// fsErr is the HTTP error for a failed look at path.
func fsErr(err error, path string) error {
	switch {
	case errors.Is(err, safepath.ErrOutside), errors.Is(err, safepath.ErrUnsafeName):
		return codeErr(http.StatusBadRequest, "path %s leaves the allocation directory", safepath.Quote(path))
	case errors.Is(err, fs.ErrNotExist):
		return codeErr(http.StatusNotFound, "no file or directory %s in the allocation directory", safepath.Quote(path))
	case errors.Is(err, fs.ErrPermission):
		return codeErr(http.StatusForbidden, "permission denied: %s", safepath.Quote(path))
	}
	return codeErr(http.StatusInternalServerError, "%s: %v", safepath.Quote(path), err)
}

func fileInfo(fi os.FileInfo) *AllocFileInfo {
	return &AllocFileInfo{Name: fi.Name(), IsDir: fi.IsDir(), Size: fi.Size(),
		FileMode: fi.Mode().String(), ModTime: fi.ModTime()}
}

// fsList lists a directory; its entries are described, not followed.
func (s *Server) fsList(w http.ResponseWriter, r *http.Request, dir, path string) {
	f, err := openDir(dir, path)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		s.writeError(w, r, fsErr(err, path))
		return
	}
	out := make([]*AllocFileInfo, 0, len(names))
	for _, n := range names {
		fi, err := safepath.LstatIn(dir, filepath.Join(path, n))
		if err != nil {
			continue // gone since
		}
		out = append(out, fileInfo(fi))
	}
	s.replyJSON(w, r, out)
}

func openDir(dir, path string) (*os.File, error) {
	f, err := safepath.OpenIn(dir, path)
	if err != nil {
		return nil, fsErr(err, path)
	}
	fi, err := f.Stat()
	if err == nil && !fi.IsDir() {
		err = codeErr(http.StatusBadRequest, "%s is a file, not a directory", safepath.Quote(path))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// fsStat describes a file or directory, with the content type of a file.
func (s *Server) fsStat(w http.ResponseWriter, r *http.Request, dir, path string) {
	f, err := safepath.OpenIn(dir, path)
	if err != nil {
		s.writeError(w, r, fsErr(err, path))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.writeError(w, r, fsErr(err, path))
		return
	}
	info := fileInfo(fi)
	if fi.Mode().IsRegular() {
		head := make([]byte, 512)
		n, _ := io.ReadFull(f, head)
		info.ContentType = http.DetectContentType(head[:n])
	}
	s.replyJSON(w, r, info)
}

// openFile opens a regular file beneath dir.
func openFile(dir, path string) (*os.File, error) {
	f, err := safepath.OpenIn(dir, path)
	if err != nil {
		return nil, fsErr(err, path)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = codeErr(http.StatusBadRequest, "%s is not a regular file", safepath.Quote(path))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// fsCat answers a file's bytes.
func (s *Server) fsCat(w http.ResponseWriter, r *http.Request, dir, path string) {
	f, err := openFile(dir, path)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, f)
}

// fsReadAt answers limit bytes (all, when limit <= 0) from offset.
func (s *Server) fsReadAt(w http.ResponseWriter, r *http.Request, dir, path string) {
	offset, err := int64Param(r, "offset")
	if err == nil && offset < 0 {
		err = codeErr(http.StatusBadRequest, "offset must not be negative")
	}
	var limit int64
	if err == nil {
		limit, err = int64Param(r, "limit")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := openFile(dir, path)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	var src io.Reader = io.NewSectionReader(f, offset, 1<<62)
	if limit > 0 {
		src = io.LimitReader(src, limit)
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, src)
}

// fsStream streams a file as Nomad's JSON frames (raw bytes with
// plain=true) from offset counted from origin; it follows the file unless
// follow=false, until the client goes away.
func (s *Server) fsStream(w http.ResponseWriter, r *http.Request, dir, path string) {
	q := r.URL.Query()
	offset, err := int64Param(r, "offset")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	follow := true
	if v := q.Get("follow"); v != "" {
		if follow, err = strconv.ParseBool(v); err != nil {
			s.writeError(w, r, codeErr(http.StatusBadRequest, "invalid follow %q", v))
			return
		}
	}
	f, err := openFile(dir, path)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	if err := seekLog(f, q.Get("origin"), offset); err != nil {
		s.writeError(w, r, codeErr(http.StatusBadRequest, "%v", err))
		return
	}
	plain := boolParam(r, "plain")
	if plain {
		w.Header().Set("Content-Type", "application/octet-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	s.streamLog(w, r, fileSource{f, path}, plain, follow)
}

// replyJSON answers v as JSON, the way wrapped routes do.
func (s *Server) replyJSON(w http.ResponseWriter, r *http.Request, v any) {
	s.leaderHeaders(w)
	w.Header().Set("Content-Type", "application/json")
	if err := writeJSON(w, v, optsOf(r).pretty); err != nil {
		s.log.Debug("http: write response", "error", err)
	}
}

func int64Param(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, codeErr(http.StatusBadRequest, "invalid %s %q: %v", name, v, err)
	}
	return n, nil
}
