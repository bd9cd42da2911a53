// Package apidocs serves the API documentation in the browser at GET /docs: Swagger UI on the
// service's own /openapi.json, where a person authorizes with client credentials (the
// document's OAuth2 flow against /authToken) and runs every endpoint.
//
// Swagger UI is the de-facto tool (a hand-written page would not reproduce its request builder,
// OAuth2 flow and schema rendering): npm's swagger-ui-dist at a pinned version (dist/VERSION), only
// the files the page needs, vendored (vendor.sh checks the tarball's integrity) and embedded, so the
// page works offline and loads nothing from another origin, which its Content-Security-Policy enforces.
package apidocs

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path of the page; its assets are under Prefix + "/".
const Prefix = "/docs"

// csp lets the page load only this service's files; Swagger UI sets inline styles, not scripts.
const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

//go:embed static/index.html static/init.js dist/swagger-ui-bundle.js dist/swagger-ui.css dist/favicon-32x32.png
var files embed.FS

type asset struct {
	body        []byte
	contentType string
	etag        string
}

// assets maps each served path to its file: the page at /docs and /docs/, the rest by name.
var assets = func() map[string]asset {
	out := map[string]asset{}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		a := asset{body: body, contentType: mime.TypeByExtension(path.Ext(name)), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		if strings.HasSuffix(name, ".js") {
			a.contentType = "text/javascript; charset=utf-8" // not every mime table knows .js
		}
		if base := path.Base(name); base == "index.html" {
			out[Prefix] = a
			out[Prefix+"/"] = a
		} else {
			out[Prefix+"/"+base] = a
		}
		return nil
	})
	if err != nil {
		panic("apidocs: embedded files: " + err.Error()) // the embed list above is fixed at build time
	}
	return out
}()

// Handler returns the handler of a documentation path, or nil when the path is not one: the
// caller answers those (404) and the methods other than GET and HEAD (405).
func Handler(urlPath string) http.HandlerFunc {
	a, ok := assets[urlPath]
	if !ok {
		return nil
	}
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		// Revalidate every time (cheap with the ETag): a new build may bring a new page.
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
	}
}
