package serve

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/quota"
	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
)

// CORS: a web page on another origin may call the JSON front only when the operator named its
// origin (YARDSTICK_CORS_ORIGINS).

// corsMethods, corsHeaders and corsExposed are what a preflight allows and what a page may read of
// an answer: the headers a client needs to back off, to authenticate and to quote a call.
const (
	corsMethods = "GET, HEAD, POST"
	corsHeaders = "Authorization, Content-Type, X-Request-Id"
)

var corsExposed = strings.Join([]string{"Retry-After", quota.StateHeader, quota.PolicyHeader, "X-Request-Id", "WWW-Authenticate"}, ", ")

// cors holds the allowed origins as the browser sends them in Origin.
type cors struct {
	origins     map[string]bool // "*": every origin
	credentials bool
	maxAge      string // seconds
}

// newCORS is the CORS of a validated configuration; nil when no origin is allowed.
func newCORS(c Config) *cors {
	if len(c.CORSOrigins) == 0 {
		return nil
	}
	out := &cors{origins: map[string]bool{}, credentials: c.CORSCredentials,
		maxAge: strconv.FormatInt(int64(c.CORSMaxAge/time.Second), 10)}
	for _, o := range c.CORSOrigins {
		out.origins[o] = true
	}
	return out
}

// wrap answers preflights and adds the CORS headers to the answers to allowed origins; other
// origins get none, so that the browser keeps the answer from the page.
func (c *cors) wrap(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin") // caches must not serve one origin's answer to another
		allowed := c.origins["*"] || c.origins[origin]
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if preflight {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			if !allowed {
				rpcerr.Write(w, rpcerr.HTTP{Status: http.StatusForbidden, Body: rpcerr.ErrorBody{
					Message: "Origin not allowed.", ExceptionType: rpcerr.ExceptionPermissionDenied,
					AdditionalInfo: "This service takes cross-origin calls only from the origins its operator lists in YARDSTICK_CORS_ORIGINS.",
				}})
				return
			}
			c.allow(h, origin)
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", c.maxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			c.allow(h, origin)
			h.Set("Access-Control-Expose-Headers", corsExposed)
		}
		next.ServeHTTP(w, r)
	})
}

func (c *cors) allow(h http.Header, origin string) {
	if c.origins["*"] {
		h.Set("Access-Control-Allow-Origin", "*")
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if c.credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}

// validateCORS checks the origins as a browser sends them in Origin: one written otherwise would
// never match, silently.
func (c Config) validateCORS(bad func(string, ...any)) {
	for _, o := range c.CORSOrigins {
		if o == "*" {
			if len(c.CORSOrigins) > 1 {
				bad("YARDSTICK_CORS_ORIGINS: * allows every origin; list it alone or list origins")
			}
			if c.CORSCredentials {
				bad("YARDSTICK_CORS_ORIGINS * with YARDSTICK_CORS_CREDENTIALS=true: browsers refuse credentials with *; list the origins")
			}
			continue
		}
		if err := checkOrigin(o); err != nil {
			bad("YARDSTICK_CORS_ORIGINS %q: %v", o, err)
		}
	}
	if c.CORSCredentials && len(c.CORSOrigins) == 0 {
		bad("YARDSTICK_CORS_CREDENTIALS=true needs YARDSTICK_CORS_ORIGINS")
	}
}

// checkOrigin reports why o is not an origin as a browser serializes it.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("want http://host[:port] or https://host[:port]")
	case u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#"):
		return fmt.Errorf("want scheme://host[:port] alone, without a path (not even /), user, query or fragment")
	case o != strings.ToLower(o):
		return fmt.Errorf("browsers send it in lower case: %s", strings.ToLower(o))
	case u.Port() == "" && strings.HasSuffix(u.Host, ":"):
		return fmt.Errorf("empty port")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q: want 1 to 65535", p)
		}
		if (u.Scheme == "http" && n == 80) || (u.Scheme == "https" && n == 443) {
			return fmt.Errorf("browsers send it without its default port: %s://%s", u.Scheme, u.Hostname())
		}
	}
	return nil
}
