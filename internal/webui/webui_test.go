package webui_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queen-go/queen/internal/webui"
)

func get(t *testing.T, base, path string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

var assetRef = regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`)

// TestEmbeddedBuild serves the committed build: index.html without caching for every app path,
// fingerprinted assets cached forever, unknown assets a 404 rather than the app.
func TestEmbeddedBuild(t *testing.T) {
	t.Parallel()
	h, err := webui.Handler("")
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	var index []byte
	for _, p := range []string{"/", "/queues/orders", "/dlq", "/index.html"} {
		resp, b := get(t, srv.URL, p)
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), p)
		require.Equal(t, "no-cache, no-store, must-revalidate", resp.Header.Get("Cache-Control"), p)
		require.Contains(t, string(b), `<div id="app">`, p)
		index = b
	}
	refs := assetRef.FindAllStringSubmatch(string(index), -1)
	require.NotEmpty(t, refs, "index.html references its bundle")
	for _, m := range refs {
		resp, b := get(t, srv.URL, m[1])
		require.Equal(t, http.StatusOK, resp.StatusCode, m[1])
		require.Equal(t, "public, max-age=31536000, immutable", resp.Header.Get("Cache-Control"), m[1])
		require.NotEmpty(t, b)
		if strings.HasSuffix(m[1], ".js") {
			require.Contains(t, resp.Header.Get("Content-Type"), "javascript")
		}
	}
	// Text assets go out gzipped to a client that accepts it, and plain to one that does not.
	req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+refs[0][1], nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", "gzip")
	zr, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	zb, err := io.ReadAll(zr.Body)
	require.NoError(t, err)
	zr.Body.Close()
	require.Equal(t, "gzip", zr.Header.Get("Content-Encoding"))
	require.Equal(t, "Accept-Encoding", zr.Header.Get("Vary"))
	gr, err := gzip.NewReader(bytes.NewReader(zb))
	require.NoError(t, err)
	plain, err := io.ReadAll(gr)
	require.NoError(t, err)
	_, want := get(t, srv.URL, refs[0][1])
	require.Equal(t, want, plain)
	req.Header.Set("Accept-Encoding", "identity")
	zr, err = http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	zr.Body.Close()
	require.Empty(t, zr.Header.Get("Content-Encoding"))

	resp, _ := get(t, srv.URL, "/assets/missing-0123456789.js")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = get(t, srv.URL, "/assets/../../../etc/passwd")
	require.NotEqual(t, http.StatusOK, resp.StatusCode)
}

// TestFirstLoadSize: index.html plus everything it loads stays under 300 KB gzipped.
func TestFirstLoadSize(t *testing.T) {
	t.Parallel()
	h, err := webui.Handler("")
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, index := get(t, srv.URL, "/")
	total := gz(t, index)
	for _, m := range assetRef.FindAllStringSubmatch(string(index), -1) {
		_, b := get(t, srv.URL, m[1])
		total += gz(t, b)
	}
	t.Logf("first load: %d bytes gzipped", total)
	require.Less(t, total, 300*1024)
}

func gz(t *testing.T, b []byte) int {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Len()
}

// TestWebappRoot serves a directory instead of the embedded copy, and refuses a root that is missing
// or has no index.html.
func TestWebappRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "assets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.html"), []byte("<html>dev build</html>"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "assets", "app-abcdef12.js"), []byte("console.log(1)"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "robots.txt"), []byte("User-agent: *"), 0o644))
	h, err := webui.Handler(dir)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, b := get(t, srv.URL, "/some/page")
	require.Equal(t, "<html>dev build</html>", string(b))
	resp, b := get(t, srv.URL, "/assets/app-abcdef12.js")
	require.Equal(t, "console.log(1)", string(b))
	require.Equal(t, "public, max-age=31536000, immutable", resp.Header.Get("Cache-Control"))
	resp, _ = get(t, srv.URL, "/robots.txt")
	require.Equal(t, "public, max-age=3600", resp.Header.Get("Cache-Control"))

	_, err = webui.Handler(filepath.Join(dir, "nope"))
	require.Error(t, err)
	_, err = webui.Handler(filepath.Join(dir, "assets"))
	require.ErrorContains(t, err, "index.html")
}
