package token

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// forger signs arbitrary headers and claims, with the fixture's own key or any other.
type forger struct {
	t   *testing.T
	key ed25519.PrivateKey // the fixture's key k1
	now time.Time
	cfp string // acme-reader's secret hash fingerprint
}

func newForger(t *testing.T, f *fixture) forger {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.keysDir, "k1.pem"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := parseKeyPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return forger{t: t, key: key, now: f.clock.Now(), cfp: f.state.Load().clients.byID["acme-reader"].fingerprint}
}

// claims are valid claims for acme-reader at scoring; edit removes (nil) or sets fields.
func (g forger) claims(edit map[string]any) jwt.MapClaims {
	c := jwt.MapClaims{
		"iss":   DefaultIssuer,
		"aud":   []string{ServiceScoring},
		"sub":   "acme-reader",
		"scope": "score:standard",
		"iat":   g.now.Unix(),
		"exp":   g.now.Add(time.Hour).Unix(),
		"jti":   "0123456789abcdef",
		"cfp":   g.cfp,
	}
	for k, v := range edit {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// sign signs claims with method and key under the header kid (nil: no kid).
func (g forger) sign(method jwt.SigningMethod, key any, kid any, claims jwt.MapClaims) string {
	g.t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != nil {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		g.t.Fatal(err)
	}
	return s
}

// withHeader is a correctly signed token with base claims and one more header.
func (g forger) withHeader(name string, value any) string {
	g.t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, g.claims(nil))
	tok.Header["kid"] = "k1"
	tok.Header[name] = value
	s, err := tok.SignedString(g.key)
	if err != nil {
		g.t.Fatal(err)
	}
	return s
}

// valid is a correctly signed token with edited claims.
func (g forger) valid(edit map[string]any) string {
	return g.sign(jwt.SigningMethodEdDSA, g.key, "k1", g.claims(edit))
}

// replaceSegment re-encodes one of the three segments of tok, keeping the others.
func replaceSegment(tok string, index int, raw []byte) string {
	parts := strings.Split(tok, ".")
	parts[index] = base64.RawURLEncoding.EncodeToString(raw)
	return strings.Join(parts, ".")
}

// TestVerifyRejects is the whole list of tokens Verify must refuse, each with the reason it
// must give, so that a case cannot pass by failing for another reason.
func TestVerifyRejects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := newForger(t, f)
	leeway := DefaultLeeway
	_, stranger, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := g.valid(nil)
	parts := strings.Split(good, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	flipped := slices.Clone(sig)
	flipped[10] ^= 0x01
	// The last base64 character of a 64-byte signature carries 4 unused bits; setting one
	// keeps the bytes but breaks the canonical encoding.
	last := parts[2][len(parts[2])-1]
	nonCanonicalSig := parts[2][:len(parts[2])-1] + string(last+1)
	if lax, err := base64.RawURLEncoding.DecodeString(nonCanonicalSig); err != nil || !slices.Equal(lax, sig) {
		t.Fatalf("non-canonical signature decodes to %x, %v; want the original bytes", lax, err)
	}
	nonCanonical := parts[0] + "." + parts[1] + "." + nonCanonicalSig
	forecastTok, err := f.Authenticate("acme-reader", "acme-secret", ServiceForecast, "10.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, token, service, reason string
	}{
		{"empty string", "", ServiceScoring, "no token"},
		{"garbage", "garbage", ServiceScoring, "malformed token"},
		{"garbage in three parts", "a.b.c", ServiceScoring, "malformed token"},
		{"four parts", good + ".x", ServiceScoring, "malformed token"},
		{"huge input, validly signed", g.valid(map[string]any{"pad": strings.Repeat("x", MaxTokenLen)}), ServiceScoring, "token too long"},
		{"payload not an object", replaceSegment(good, 1, []byte(`[]`)), ServiceScoring, "malformed token"},
		{"alg none", g.sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "k1", g.claims(nil)), ServiceScoring, "invalid signature or algorithm"},
		{"HS256 keyed with the public key", g.sign(jwt.SigningMethodHS256, []byte(g.key.Public().(ed25519.PublicKey)), "k1", g.claims(nil)), ServiceScoring, "invalid signature or algorithm"},
		{"RS256", g.sign(jwt.SigningMethodRS256, rsaKey, "k1", g.claims(nil)), ServiceScoring, "invalid signature or algorithm"},
		{"ES256", g.sign(jwt.SigningMethodES256, ecKey, "k1", g.claims(nil)), ServiceScoring, "invalid signature or algorithm"},
		{"alg header removed", replaceSegment(good, 0, []byte(`{"kid":"k1","typ":"JWT"}`)), ServiceScoring, "invalid token"},
		{"EdDSA by another key under a known kid", g.sign(jwt.SigningMethodEdDSA, stranger, "k1", g.claims(nil)), ServiceScoring, "invalid signature or algorithm"},
		{"unknown kid", g.sign(jwt.SigningMethodEdDSA, stranger, "k9", g.claims(nil)), ServiceScoring, "unknown key id"},
		// Another process's key (dev mode: each service makes its own): the payload's aud tells a
		// token of the other service from one that could not be read.
		{"unknown kid, aud the other service", g.sign(jwt.SigningMethodEdDSA, stranger, "k9", g.claims(map[string]any{"aud": ServiceForecast})), ServiceScoring, "unknown key id; the unverified aud names another service"},
		{"unknown kid, aud the other service, another issuer", g.sign(jwt.SigningMethodEdDSA, stranger, "k9", g.claims(map[string]any{"aud": ServiceForecast, "iss": "someone-else"})), ServiceScoring, "unknown key id"},
		{"unknown kid, aud both services", g.sign(jwt.SigningMethodEdDSA, stranger, "k9", g.claims(map[string]any{"aud": []string{ServiceForecast, ServiceScoring}})), ServiceScoring, "unknown key id"},
		{"unknown kid, aud not a service", g.sign(jwt.SigningMethodEdDSA, stranger, "k9", g.claims(map[string]any{"aud": "billing"})), ServiceScoring, "unknown key id"},
		{"missing kid", g.sign(jwt.SigningMethodEdDSA, g.key, nil, g.claims(nil)), ServiceScoring, "no key id"},
		{"kid not a string", g.sign(jwt.SigningMethodEdDSA, g.key, 1, g.claims(nil)), ServiceScoring, "no key id"},
		{"tampered header", replaceSegment(good, 0, []byte(`{"alg":"EdDSA","kid":"k1","typ":"JWT","x":1}`)), ServiceScoring, "invalid signature or algorithm"},
		{"tampered payload", parts[0] + "." + strings.Split(g.valid(map[string]any{"scope": "*"}), ".")[1] + "." + parts[2], ServiceScoring, "invalid signature or algorithm"},
		{"tampered signature", replaceSegment(good, 2, flipped), ServiceScoring, "invalid signature or algorithm"},
		{"signature removed", parts[0] + "." + parts[1] + ".", ServiceScoring, "invalid signature or algorithm"},
		{"signature not canonical base64", nonCanonical, ServiceScoring, "malformed token"},
		{"expired beyond the leeway", g.valid(map[string]any{"exp": g.now.Add(-leeway - time.Second).Unix()}), ServiceScoring, "token expired"},
		{"nbf in the future beyond the leeway", g.valid(map[string]any{"nbf": g.now.Add(leeway + time.Minute).Unix()}), ServiceScoring, "token not valid yet"},
		{"iat in the future beyond the leeway", g.valid(map[string]any{"iat": g.now.Add(leeway + time.Minute).Unix()}), ServiceScoring, "token issued in the future"},
		{"wrong aud", g.valid(map[string]any{"aud": ServiceForecast}), ServiceScoring, "token is for another service"},
		{"forecast token at scoring", forecastTok.AccessToken, ServiceScoring, "token is for another service"},
		{"aud naming both services", g.valid(map[string]any{"aud": []string{ServiceScoring, ServiceForecast}}), ServiceScoring, "token is for another service"},
		{"wrong iss", g.valid(map[string]any{"iss": "someone-else"}), ServiceScoring, "wrong issuer"},
		{"missing sub", g.valid(map[string]any{"sub": nil}), ServiceScoring, "missing claim"},
		{"missing exp", g.valid(map[string]any{"exp": nil}), ServiceScoring, "missing claim"},
		{"missing jti", g.valid(map[string]any{"jti": nil}), ServiceScoring, "missing claim"},
		{"missing aud", g.valid(map[string]any{"aud": nil}), ServiceScoring, "missing claim"},
		{"missing iss", g.valid(map[string]any{"iss": nil}), ServiceScoring, "missing claim"},
		{"missing iat", g.valid(map[string]any{"iat": nil}), ServiceScoring, "missing claim"},
		{"exp not a number", g.valid(map[string]any{"exp": "tomorrow"}), ServiceScoring, "malformed token"},
		{"scope not a string or list", g.valid(map[string]any{"scope": 7}), ServiceScoring, "malformed token"},
		{"crit header (RFC 7515 §4.1.11)", g.withHeader("crit", []string{"exp"}), ServiceScoring, "unsupported critical header"},
		{"crit header with an extension", g.withHeader("crit", []string{"b64"}), ServiceScoring, "unsupported critical header"},
		{"crit header empty", g.withHeader("crit", []string{}), ServiceScoring, "unsupported critical header"},
		{"missing cfp", g.valid(map[string]any{"cfp": nil}), ServiceScoring, "missing claim"},
		{"cfp of another secret hash", g.valid(map[string]any{"cfp": "AAAAAAAAAAAAAAAA"}), ServiceScoring, "client secret changed"},
		{"sub not a registered client", g.valid(map[string]any{"sub": "ghost"}), ServiceScoring, "client no longer registered"},
		{"unknown service", good, "billing", "unknown service"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			claims, err := f.Verify(tc.token, tc.service)
			if !errors.Is(err, ErrNotAuthenticated) {
				t.Fatalf("got claims %+v, error %v; want ErrNotAuthenticated", claims, err)
			}
			if want := "not authenticated: " + tc.reason; err.Error() != want {
				t.Errorf("got error %q; want %q", err, want)
			}
			if claims.ClientID != "" || claims.Scope != nil {
				t.Errorf("got claims %+v with the error; want none", claims)
			}
			want := kindOfReason[tc.reason]
			for _, kind := range []error{ErrTokenExpired, ErrTokenOtherService, ErrTokenRevoked, ErrTokenUnreadable} {
				if got := errors.Is(err, kind); got != (kind == want) {
					t.Errorf("errors.Is(%q, %q) = %t; want %t (the kind of %q is %q)", err, kind, got, kind == want, tc.reason, want)
				}
			}
		})
	}
}

// kindOfReason is the kind a caller acts on, for every reason Verify gives.
var kindOfReason = map[string]error{
	"token expired":                ErrTokenExpired,
	"token is for another service": ErrTokenOtherService,
	"unknown key id; the unverified aud names another service": ErrTokenOtherService,
	"client secret changed":          ErrTokenRevoked,
	"client no longer registered":    ErrTokenRevoked,
	"no token":                       ErrTokenUnreadable,
	"token too long":                 ErrTokenUnreadable,
	"unknown service":                ErrTokenUnreadable,
	"malformed token":                ErrTokenUnreadable,
	"invalid signature or algorithm": ErrTokenUnreadable,
	"invalid token":                  ErrTokenUnreadable,
	"unknown key id":                 ErrTokenUnreadable,
	"no key id":                      ErrTokenUnreadable,
	"token not valid yet":            ErrTokenUnreadable,
	"token issued in the future":     ErrTokenUnreadable,
	"wrong issuer":                   ErrTokenUnreadable,
	"missing claim":                  ErrTokenUnreadable,
	"unsupported critical header":    ErrTokenUnreadable,
}

// TestVerifyAccepts holds the forger honest: its base claims verify, and the leeway and both
// scope encodings are honoured.
func TestVerifyAccepts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := newForger(t, f)
	leeway := DefaultLeeway
	cases := []struct {
		name  string
		edit  map[string]any
		scope []string
	}{
		{"base claims", nil, []string{"score:standard"}},
		{"expired within the leeway", map[string]any{"exp": g.now.Add(-leeway + time.Second).Unix()}, []string{"score:standard"}},
		{"iat in the future within the leeway", map[string]any{"iat": g.now.Add(leeway - time.Second).Unix()}, []string{"score:standard"}},
		{"nbf in the future within the leeway", map[string]any{"nbf": g.now.Add(leeway - time.Second).Unix()}, []string{"score:standard"}},
		{"aud as a single string", map[string]any{"aud": ServiceScoring}, []string{"score:standard"}},
		{"scope as an array", map[string]any{"scope": []string{"score:bayes", "score:standard"}}, []string{"score:bayes", "score:standard"}},
		{"scope as a spaced string", map[string]any{"scope": " score:bayes  score:standard "}, []string{"score:bayes", "score:standard"}},
		{"scope beyond the client's permissions is cut", map[string]any{"scope": "score:scale score:bayes"}, []string{"score:bayes"}},
		{"scope * is the client's permissions", map[string]any{"scope": "*"}, []string{"score:standard", "score:bayes"}},
		{"no scope", map[string]any{"scope": nil}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := f.Verify(g.valid(tc.edit), ServiceScoring)
			if err != nil {
				t.Fatalf("got %v; want nil", err)
			}
			if c.ClientID != "acme-reader" || c.Service != ServiceScoring || c.ID != "0123456789abcdef" {
				t.Errorf("got claims %+v; want acme-reader at scoring with jti 0123456789abcdef", c)
			}
			if !slices.Equal(c.Scope, tc.scope) {
				t.Errorf("got scope %q; want %q", c.Scope, tc.scope)
			}
		})
	}
}

func TestClaimsAllowsAndRequire(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scope []string
		perm  string
		want  bool
	}{
		{[]string{"score:standard"}, "score:standard", true},
		{[]string{"score:standard"}, "score:bayes", false},
		{[]string{PermAll}, "forecast:group", true},
		{[]string{PermAll}, "score:adaptive", true},
		{[]string{"score:bayes"}, "score:adaptive", false},
		{[]string{"score:adaptive"}, "score:adaptive", true},
		{nil, "score:standard", false},
		{[]string{"score:*"}, "score:standard", false}, // no wildcards but "*"
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.scope, "+")+"/"+tc.perm, func(t *testing.T) {
			t.Parallel()
			c := Claims{Scope: tc.scope}
			if got := c.Allows(tc.perm); got != tc.want {
				t.Errorf("Allows: got %v; want %v", got, tc.want)
			}
			err := c.Require(tc.perm)
			if tc.want && err != nil {
				t.Errorf("Require: got %v; want nil", err)
			}
			if !tc.want && (!errors.Is(err, ErrPermissionDenied) || !strings.Contains(err.Error(), tc.perm)) {
				t.Errorf("Require: got %v; want ErrPermissionDenied naming %q", err, tc.perm)
			}
		})
	}
}
