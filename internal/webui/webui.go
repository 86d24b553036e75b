// Package webui serves the operator dashboard: the single-page app built from web/ (embedded in the
// binary, or read from WEBAPP_ROOT), with the cache headers of the contract and the client-side routing
// fallback to index.html.
package webui

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
)

// dist is the committed build of web/ (`make web` rewrites it).
//
//go:embed dist
var dist embed.FS

// Handler serves the dashboard. root "" serves the embedded build; otherwise the directory root
// (WEBAPP_ROOT) is served as it is on disk, which lets a developer iterate without rebuilding the binary.
func Handler(root string) (http.Handler, error) {
	var files fs.FS
	if root == "" {
		sub, err := fs.Sub(dist, "dist")
		if err != nil {
			return nil, fmt.Errorf("webui: embedded build: %w", err)
		}
		files = sub
	} else {
		st, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("webui: WEBAPP_ROOT: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("webui: WEBAPP_ROOT %s is not a directory", root)
		}
		files = os.DirFS(root)
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return nil, fmt.Errorf("webui: index.html: %w", err)
	}
	return &handler{files: files, index: index}, nil
}

type handler struct {
	files fs.FS
	index []byte
	gz    sync.Map // file name -> gzipped bytes, made on first request (text files only)
}

// compressible are the extensions worth gzipping; images and fonts are compressed already.
var compressible = map[string]bool{".html": true, ".js": true, ".mjs": true, ".css": true, ".json": true, ".svg": true, ".txt": true}

// hashed matches the content-hashed names the build gives its assets (name-<hash>.ext): their bytes
// never change under that name, so browsers may keep them forever.
var hashed = regexp.MustCompile(`[-.][A-Za-z0-9_-]{8,}\.(js|mjs|css|woff2?|svg|png|wasm)$`)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for _, seg := range strings.Split(r.URL.Path, "/") {
		if seg == ".." {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name != "" && name != "index.html" {
		if st, err := fs.Stat(h.files, name); err == nil && !st.IsDir() {
			b, err := fs.ReadFile(h.files, name)
			if err != nil {
				http.Error(w, "Internal Server Error", http.StatusInternalServerError)
				return
			}
			h.file(w, r, name, b)
			return
		}
		// A missing asset is a 404, not the app: a stale index.html asking for an old bundle must fail
		// visibly instead of being handed HTML as JavaScript.
		if strings.HasPrefix(name, "assets/") {
			http.Error(w, "Not Found", http.StatusNotFound)
			return
		}
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-cache, no-store, must-revalidate")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(h.index)
	}
}

func (h *handler) file(w http.ResponseWriter, r *http.Request, name string, b []byte) {
	hd := w.Header()
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	hd.Set("Content-Type", ct)
	if hashed.MatchString(name) {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "public, max-age=3600")
	}
	hd.Set("X-Content-Type-Options", "nosniff")
	if compressible[path.Ext(name)] {
		hd.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			b = h.gzipped(name, b)
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// gzipped compresses a file once; with WEBAPP_ROOT a changed file under the same name keeps the first
// compression until restart, which is fine for fingerprinted names and the development use it has.
func (h *handler) gzipped(name string, b []byte) []byte {
	if v, ok := h.gz.Load(name); ok {
		return v.([]byte)
	}
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	h.gz.Store(name, buf.Bytes())
	return buf.Bytes()
}
